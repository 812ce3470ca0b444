// One model's download from start to install: list the host's files, keep what a stopped download
// left that is still of the same version, check the disk has room, fetch and verify each file, then
// install the set — or leave everything as it was, with the partial files kept for a resume.
import { ModelError, type CatalogEntry } from './catalog.js';
import { whileDownloading } from './active-downloads.js';
import { checkDiskSpace, type DiskSpaceOptions } from './disk-space.js';
import { ProgressMeter, type DownloadProgress } from './download-progress.js';
import { listRemoteFiles, planFiles } from './host-files.js';
import { HostSession, type HostSessionOptions } from './host-session.js';
import { installVerified, keptPartials, settle, writePartialRecord, type ModelManifest } from './install.js';
import { assertModelId, fileIn, isFilePath, partialDir } from './model-paths.js';
import { fetchFile, type Transfer } from './transfer.js';

/** Knobs tests turn; the defaults are what the app uses. */
export interface DownloadTuning extends Omit<HostSessionOptions, 'host' | 'signal'>, DiskSpaceOptions {
  /** Minimum time between progress events (default 250 ms). */
  progressIntervalMs?: number;
}

export interface DownloadOptions extends DownloadTuning {
  modelsDir: string;
  /** Default https://huggingface.co; mirrors (https://hf-mirror.com) use the same paths. */
  host?: string;
  signal?: AbortSignal;
  onProgress?: (progress: DownloadProgress) => void;
}

/**
 * Downloads, verifies and installs one model. Resolves with the written manifest; rejects with a
 * ModelError. A cancelled or failed download keeps what verified or partially arrived in
 * `.partial/`, so the next call continues; an installed older version stays as it was.
 */
export async function downloadModel(entry: CatalogEntry, options: DownloadOptions): Promise<ModelManifest> {
  assertModelId(entry.id);
  return whileDownloading(
    options.modelsDir,
    entry.id,
    () => new ModelError('busy', `${entry.name} is already downloading.`),
    () => new Download(entry, options).run(),
  );
}

class Download {
  private readonly session: HostSession;
  private readonly meter: ProgressMeter;
  private readonly partial: string;

  constructor(
    private readonly entry: CatalogEntry,
    private readonly options: DownloadOptions,
  ) {
    this.session = new HostSession(entry, options);
    this.partial = partialDir(options.modelsDir, entry.id);
    this.meter = new ProgressMeter(entry.id, options.progressIntervalMs ?? 250, options.onProgress);
    for (const file of [...entry.files, ...entry.optionalFiles]) {
      if (!isFilePath(file)) throw new ModelError('invalid_id', `The catalogue entry for ${entry.id} names an unsafe file "${file}".`);
    }
  }

  async run(): Promise<ModelManifest> {
    const { modelsDir } = this.options;
    const { entry, session, meter } = this;
    session.throwIfCancelled();
    meter.emit({ phase: 'checking' }, true);
    await settle(modelsDir, entry.id);
    const plan = planFiles(entry, await listRemoteFiles(session, entry.id), session.label);
    const done = await keptPartials(this.partial, plan);
    const total = plan.reduce((sum, file) => sum + file.size, 0);
    const already = plan.reduce((sum, file) => sum + (done.get(file.path) ?? 0), 0);
    await checkDiskSpace(modelsDir, entry.name, total - already, this.options);
    await writePartialRecord(this.partial, plan);
    meter.start(total, already, plan.length);

    const transfer: Transfer = { session, entry, meter };
    const verified: ModelManifest['files'] = [];
    for (const [index, file] of plan.entries()) {
      meter.emit({ phase: 'downloading', file: file.path, fileIndex: index }, true);
      verified.push({ path: file.path, size: file.size, sha256: await fetchFile(transfer, file, fileIn(this.partial, file.path)) });
    }
    session.throwIfCancelled();
    meter.emit({ phase: 'installing', file: undefined, fileIndex: plan.length }, true);
    const manifest: ModelManifest = {
      format: 1,
      id: entry.id,
      task: entry.task,
      dtype: entry.dtype,
      host: session.host,
      installedAt: new Date().toISOString(),
      files: verified,
    };
    await installVerified(modelsDir, manifest);
    meter.finish();
    return manifest;
  }
}
