// Downloads catalogue models from the Hugging Face hub (or a mirror with the same paths) into
// `<modelsDir>/<org>/<name>/`, where transformers.js loads them from. This module is the downloader's
// public face: the manager the host runs downloads through, and the names the rest of the app uses.
// The work is done by
//   download-run.ts       one download from the file list to the installed set
//   host-session.ts       requests to the model host, retries with backoff, cancellation
//   host-files.ts         the host's file listing and the size / checksum checks against it
//   transfer.ts           one file, resumed with HTTP Range
//   install.ts            partial files, staging, manifest, swap, installed models, removal
//   model-paths.ts        model ids and the folder layout (and why it is so)
//   disk-space.ts         the free-space check before a download
//   download-progress.ts  the progress events
import type { CatalogEntry } from './catalog.js';
import { downloadModel, type DownloadTuning } from './download-run.js';
import type { DownloadProgress } from './download-progress.js';
import type { ModelManifest } from './install.js';

export { ModelError, type ModelErrorCode } from './catalog.js';
export { isDownloading } from './active-downloads.js';
export { DEFAULT_DISK_MARGIN_BYTES, formatBytes, freeSpaceAt } from './disk-space.js';
export { downloadModel, type DownloadOptions, type DownloadTuning } from './download-run.js';
export type { DownloadProgress } from './download-progress.js';
export { DEFAULT_MODEL_HOST } from './host-session.js';
export { checkModel, deleteModel, installedModels, partialBytes, type InstalledModel, type ModelManifest } from './install.js';
export { isModelId, MANIFEST_FILE, modelDir } from './model-paths.js';

export interface ModelDownloadsOptions extends DownloadTuning {
  modelsDir: string;
  /** Read at each start, so a changed setting applies to the next download. */
  host?: string | (() => string | undefined);
}

/**
 * The downloads of one models folder. A second start() for a model that is downloading joins the
 * running download (same promise) instead of starting another.
 */
export class ModelDownloads {
  private readonly running = new Map<
    string,
    { controller: AbortController; promise: Promise<ModelManifest>; listeners: Set<(p: DownloadProgress) => void>; last?: DownloadProgress }
  >();
  private readonly listeners = new Set<(progress: DownloadProgress) => void>();

  constructor(private readonly options: ModelDownloadsOptions) {}

  start(entry: CatalogEntry, options: { onProgress?: (progress: DownloadProgress) => void } = {}): Promise<ModelManifest> {
    const existing = this.running.get(entry.id);
    if (existing) {
      if (options.onProgress) existing.listeners.add(options.onProgress);
      return existing.promise;
    }
    const controller = new AbortController();
    const listeners = new Set<(p: DownloadProgress) => void>(options.onProgress ? [options.onProgress] : []);
    const { host, ...tuning } = this.options;
    const run = {
      controller,
      listeners,
      last: undefined as DownloadProgress | undefined,
      promise: undefined as unknown as Promise<ModelManifest>,
    };
    run.promise = (async () => {
      try {
        return await downloadModel(entry, {
          ...tuning,
          host: typeof host === 'function' ? host() : host,
          signal: controller.signal,
          onProgress: (progress) => {
            run.last = progress;
            for (const listener of [...run.listeners, ...this.listeners]) {
              try {
                listener(progress);
              } catch {
                // A broken listener must not break the download.
              }
            }
          },
        });
      } finally {
        this.running.delete(entry.id);
      }
    })();
    this.running.set(entry.id, run);
    return run.promise;
  }

  /** Stops a download (its promise rejects with `cancelled`); false when it was not running. */
  cancel(id: string): boolean {
    const run = this.running.get(id);
    run?.controller.abort();
    return Boolean(run);
  }

  isRunning(id: string): boolean {
    return this.running.has(id);
  }

  /** The latest progress of every running download. */
  progress(): DownloadProgress[] {
    return [...this.running.values()].flatMap((run) => (run.last ? [run.last] : []));
  }

  /** Progress of every download this manager runs; returns the unsubscribe function. */
  onProgress(listener: (progress: DownloadProgress) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Cancels everything and waits until the files are closed (host shutdown). */
  async close(): Promise<void> {
    const runs = [...this.running.values()];
    for (const run of runs) run.controller.abort();
    await Promise.allSettled(runs.map((run) => run.promise));
  }
}
