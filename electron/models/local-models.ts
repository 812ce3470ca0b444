// On-device models for the API: the catalogue merged with what this computer has of each model
// (installed, a stopped download waiting to resume, downloading now), downloads with progress
// events, cancel, delete, and the choice of the embedding model memory search uses.
//
// Install state is read from disk every time (the downloader's manifests and `.partial/` folders),
// so it survives a restart and a crash; the only state kept here is what a person should see about
// the last failed download until they try again.
import {
  ApiError,
  type ErrorCode,
  type LocalModel,
  type LocalModelError,
  type ModelDownloadProgress,
  type ProviderConfig,
  type Settings,
} from '../../shared/api.js';
import { catalogEntry, catalogModels, testModelsEnabled, type CatalogEntry, type ModelErrorCode } from './catalog.js';
import {
  checkModel,
  DEFAULT_DISK_MARGIN_BYTES,
  deleteModel,
  freeSpaceAt,
  installedModels,
  ModelDownloads,
  ModelError,
  partialBytes,
  type DownloadTuning,
  type InstalledModel,
} from './download.js';
import type { HostEvents } from '../events/events.js';
import type { SettingsStore } from '../settings/settings.js';

/** What createHost accepts besides HostOptions for on-device models. */
export interface HostModelOptions {
  models?: {
    /** Offer the test-only models (electron/models/testing/models). Default: ANIMA_TEST_MODELS=1. */
    includeTestModels?: boolean;
    /** Downloader knobs: tests shorten retries and fake a full disk. */
    tuning?: DownloadTuning;
  };
}

/** One progress event per model at most this often (phase changes always go out). */
export const PROGRESS_EVENT_MS = 250;

const ERROR_CODE: Record<ModelErrorCode, ErrorCode> = {
  model_not_found: 'model_not_found',
  not_installed: 'model_not_installed',
  disk_full: 'model_disk_full',
  integrity: 'model_integrity',
  network: 'model_network',
  cancelled: 'cancelled',
  invalid_id: 'invalid_input',
  busy: 'model_busy',
  io: 'model_io',
};

export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof ModelError) return new ApiError(ERROR_CODE[error.code], error.message, error.code === 'invalid_id' ? 'id' : undefined);
  return new ApiError('internal', error instanceof Error ? error.message : String(error));
}

export interface LocalModelsDeps {
  modelsDir: string;
  settings: SettingsStore;
  events: HostEvents;
  /** The saved model connections, to say which use a chat model. */
  providers: () => Promise<ProviderConfig[]>;
  /** Frees the local chat model's memory and files before they are deleted. */
  unloadChatModel?: () => Promise<void>;
  log: (level: 'info' | 'warn' | 'error', message: string) => void;
  /** Free bytes on the data folder's disk (HostOptions.freeBytes), used unless tuning has its own. */
  freeBytes?: (dir: string) => number;
  options?: HostModelOptions['models'];
}

export class LocalModels {
  private readonly downloads: ModelDownloads;
  private readonly includeTestModels: boolean;
  /** The last failed download of each model, until it is tried again or removed. */
  private readonly errors = new Map<string, LocalModelError>();
  /** Free bytes the downloader's last disk check saw (for "needs X, Y is free" in the person's words). */
  private lastFree: number | undefined;
  private readonly lastEmit = new Map<string, { at: number; phase: string }>();
  /** The model host setting, read right before each download starts. */
  private hostSetting: string | undefined;
  private closed = false;

  constructor(private readonly deps: LocalModelsDeps) {
    this.includeTestModels = deps.options?.includeTestModels ?? testModelsEnabled();
    const tuning = deps.options?.tuning ?? {};
    const freeBytes = deps.freeBytes;
    const measure = tuning.freeSpace ?? (freeBytes ? async (dir: string) => freeBytes(dir) : freeSpaceAt);
    this.downloads = new ModelDownloads({
      ...tuning,
      modelsDir: deps.modelsDir,
      // Read at each start, so a changed host applies to the next download.
      host: () => this.hostSetting,
      freeSpace: async (dir) => {
        const free = await measure(dir);
        this.lastFree = free;
        return free;
      },
    });
    this.downloads.onProgress((progress) => this.progress(progress));
  }

  private catalog(): CatalogEntry[] {
    return catalogModels({ includeTestModels: this.includeTestModels });
  }

  private entry(id: string): CatalogEntry {
    try {
      return catalogEntry(id, { includeTestModels: this.includeTestModels });
    } catch (error) {
      throw toApiError(error);
    }
  }

  async list(): Promise<LocalModel[]> {
    const [installed, settings, providers] = await Promise.all([
      installedModels(this.deps.modelsDir).catch((error: Error) => {
        this.deps.log('warn', `models: could not read the models folder: ${error.message}`);
        return [] as InstalledModel[];
      }),
      this.deps.settings.get(),
      this.deps.providers().catch(() => [] as ProviderConfig[]),
    ]);
    const byId = new Map(installed.map((m) => [m.id, m]));
    return Promise.all(this.catalog().map((entry) => this.describe(entry, byId.get(entry.id), settings, providers)));
  }

  async get(id: string): Promise<LocalModel> {
    const models = await this.list();
    const found = models.find((m) => m.id === id);
    if (!found) throw toApiError(new ModelError('model_not_found', `"${id}" is not a model Anima offers.`));
    return found;
  }

  private async describe(entry: CatalogEntry, installed: InstalledModel | undefined, settings: Settings, providers: ProviderConfig[]): Promise<LocalModel> {
    const downloading = this.downloads.isRunning(entry.id);
    let checked = installed;
    let error = this.errors.get(entry.id) ?? null;
    if (installed && !downloading) {
      // A quick size check: a file removed or cut short by hand is not an installed model.
      try {
        await checkModel(this.deps.modelsDir, entry.id);
      } catch (problem) {
        checked = undefined;
        // Found on disk, not in a download: the files stay where they are until downloaded again.
        const found = toApiError(problem);
        error ??= found.code === 'model_integrity' ? { code: 'model_damaged', message: found.message } : { ...found.toJSON() };
      }
    }
    const partial = downloading ? 0 : await partialBytes(this.deps.modelsDir, entry.id).catch(() => 0);
    const progress = downloading ? (this.downloads.progress().find((p) => p.id === entry.id) ?? null) : null;
    const state: LocalModel['state'] = downloading ? 'downloading' : checked ? 'installed' : partial > 0 ? 'partial' : 'available';
    return {
      id: entry.id,
      task: entry.task,
      name: entry.name,
      approxBytes: entry.approxBytes,
      languages: [...entry.languages],
      licence: entry.licence,
      goodFor: entry.goodFor,
      testOnly: Boolean(entry.testOnly),
      dimensions: entry.task === 'embedding' ? entry.dimensions : null,
      contextLength: entry.task === 'chat' ? entry.contextLength : null,
      state,
      installed: checked ? { bytesOnDisk: checked.bytesOnDisk, installedAt: checked.manifest.installedAt, host: checked.manifest.host } : null,
      partialBytes: partial,
      progress: progress ? { ...progress } : null,
      error: downloading ? null : error,
      usedBy: {
        embeddings: settings.models.embedding === entry.id,
        providers: providers.filter((p) => p.kind === 'local' && p.model === entry.id).map((p) => ({ id: p.id, name: p.name })),
      },
    };
  }

  /** Starts or resumes a download and returns at once; the end arrives as a models.changed event. */
  async download(id: string): Promise<LocalModel> {
    const entry = this.entry(id);
    if (this.closed) throw new ApiError('conflict', 'Anima is shutting down.');
    if (!this.downloads.isRunning(id)) {
      const current = await this.get(id);
      // Already there and whole: nothing to fetch.
      if (current.state === 'installed') return current;
      this.hostSetting = (await this.deps.settings.get()).models.host;
      this.errors.delete(id);
      this.lastEmit.delete(id);
      const before = current.partialBytes;
      const run = this.downloads.start(entry);
      run.then(
        () => void this.finished(entry, null, before),
        (error: unknown) => void this.finished(entry, error, before),
      );
    }
    return this.get(id);
  }

  private async finished(entry: CatalogEntry, error: unknown, partialBefore: number): Promise<void> {
    if (error) {
      if (!(error instanceof ModelError && error.code === 'cancelled')) {
        const api = toApiError(error);
        const failure: LocalModelError = api.toJSON();
        if (error instanceof ModelError && error.code === 'disk_full') {
          const free = this.lastFree;
          if (free !== undefined) {
            failure.freeBytes = free;
            failure.neededBytes = Math.max(0, entry.approxBytes - partialBefore) + (this.deps.options?.tuning?.diskMarginBytes ?? DEFAULT_DISK_MARGIN_BYTES);
          }
        }
        this.errors.set(entry.id, failure);
        this.deps.log('warn', `models: downloading ${entry.id} failed: ${api.message}`);
      }
    } else {
      this.deps.log('info', `models: installed ${entry.id}`);
    }
    this.lastEmit.delete(entry.id);
    if (!this.closed) await this.changed(entry.id);
  }

  /** Stops a download, keeping what arrived; resolves once its files are closed. */
  async cancel(id: string): Promise<LocalModel> {
    this.entry(id);
    if (this.downloads.cancel(id)) {
      // The run settles quickly once aborted; wait so the list shows the partial bytes.
      await this.settled(id);
    }
    return this.get(id);
  }

  private async settled(id: string): Promise<void> {
    for (let i = 0; i < 200 && this.downloads.isRunning(id); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  }

  /** Removes the model (and any stopped download of it); memory search stops using it first. */
  async delete(id: string): Promise<LocalModel> {
    const entry = this.entry(id);
    if (this.downloads.cancel(id)) await this.settled(id);
    const settings = await this.deps.settings.get();
    if (settings.models.embedding === id) await this.deps.settings.update({ models: { embedding: null } });
    if (entry.task === 'chat') await this.deps.unloadChatModel?.().catch(() => undefined);
    try {
      await deleteModel(this.deps.modelsDir, id);
    } catch (error) {
      throw toApiError(error);
    }
    this.errors.delete(id);
    this.deps.log('info', `models: removed ${id}`);
    await this.changed(id);
    return this.get(id);
  }

  /** Checks that `id` can serve memory search: a catalogue embedding model, installed and whole. */
  async checkEmbeddingChoice(id: string | null, field = 'id'): Promise<void> {
    if (id === null) return;
    const entry = this.entry(id);
    if (entry.task !== 'embedding') {
      throw new ApiError('invalid_input', `${entry.name} writes text; memory search needs an embedding model.`, field);
    }
    try {
      await checkModel(this.deps.modelsDir, id);
    } catch (error) {
      const api = toApiError(error);
      throw new ApiError(api.code, `${entry.name} is not downloaded completely yet. ${api.message}`, field);
    }
  }

  async useForEmbeddings(id: string | null): Promise<Settings> {
    await this.checkEmbeddingChoice(id);
    const next = await this.deps.settings.update({ models: { embedding: id } });
    await this.changed(id);
    return next;
  }

  /** Tells every window the list changed (install, failure, stop, removal, a new choice). */
  async changed(id: string | null): Promise<void> {
    try {
      this.deps.events.emit('models.changed', { id, models: await this.list() });
    } catch (error) {
      this.deps.log('warn', `models: could not read the list after a change: ${(error as Error).message}`);
    }
  }

  private progress(progress: ModelDownloadProgress): void {
    if (this.closed) return;
    const now = performance.now();
    const last = this.lastEmit.get(progress.id);
    if (last && last.phase === progress.phase && progress.phase === 'downloading' && now - last.at < PROGRESS_EVENT_MS) return;
    this.lastEmit.set(progress.id, { at: now, phase: progress.phase });
    this.deps.events.emit('models.progress', { ...progress });
  }

  /** Cancels every download (their partial files stay for the next start) and waits for them. */
  async close(): Promise<void> {
    this.closed = true;
    await this.downloads.close();
  }
}
