// Downloads catalogue models from the Hugging Face hub (or a mirror with the same paths) into
// `<modelsDir>/<org>/<name>/`, where transformers.js loads them from.
//
// Layout, and why:
//   <org>/<name>/                the installed model, untouched until a new version fully verified
//   <org>/<name>/.partial/…      files being fetched, kept across cancel, crash and restart so a
//                                later start continues with HTTP Range instead of from zero
//   .staging/<org>/<name>/       a verified set with its manifest, renamed over the installed folder
//   .trash/<org>/<name>-<rand>/  the replaced version until it is removed
// The dot folders sit where a two-level `org/name` scan (this module's and electron/llm/local.ts's)
// never mistakes them for models.
import { createHash, randomUUID, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs, { type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ModelDownloadProgress } from '../../shared/api.js';
import { ModelError, type CatalogEntry, type ModelDtype, type ModelTask } from './catalog.js';

export { ModelError, type ModelErrorCode } from './catalog.js';

export const DEFAULT_MODEL_HOST = 'https://huggingface.co';
/** Room left on the disk after a download: a full disk breaks the database and everything else. */
export const DEFAULT_DISK_MARGIN_BYTES = 200 * 1_000_000;
export const MANIFEST_FILE = 'anima-model.json';

const PARTIAL_DIR = '.partial';
const PARTIAL_RECORD = '.anima-partial.json';
const STAGING_DIR = '.staging';
const TRASH_DIR = '.trash';

export interface ModelManifest {
  format: 1;
  id: string;
  task: ModelTask;
  dtype: ModelDtype;
  /** The host the files came from (a mirror is worth knowing when a file turns out bad). */
  host: string;
  installedAt: string;
  files: { path: string; size: number; sha256: string }[];
}

export interface InstalledModel {
  id: string;
  dir: string;
  manifest: ModelManifest;
  /** Everything in the model folder except an unfinished download of a newer version. */
  bytesOnDisk: number;
}

/** A download's progress; the `models.progress` event carries it unchanged. */
export type DownloadProgress = ModelDownloadProgress;

/** Knobs tests turn; the defaults are what the app uses. */
export interface DownloadTuning {
  fetch?: typeof fetch;
  /** Free bytes on the filesystem holding `dir` (which may not exist yet). */
  freeSpace?: (dir: string) => Promise<number>;
  diskMarginBytes?: number;
  /** Attempts after a dropped connection that brought no new bytes (default 4). */
  retries?: number;
  /** First backoff delay, doubled per failed attempt (default 1 s). */
  retryDelayMs?: number;
  /** A connection silent this long is dropped and retried (default 60 s). */
  idleTimeoutMs?: number;
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

interface RemoteFile {
  path: string;
  size: number;
  /** Known for LFS files (the hub lists the content's sha256 as the LFS oid). */
  sha256?: string;
  /** Known for files outside LFS: git's blob id, sha1("blob <size>\0" + content). */
  gitSha1?: string;
}

// ── ids and paths ──────────────────────────────────────────────────────────────────────────────

/** `org/name` as the hub spells ids; a leading letter or digit keeps `.`, `..` and our dot folders out. */
const ID_PART = /^[A-Za-z0-9][\w.-]{0,95}$/;
const FILE_SEGMENT = /^[\w][\w.-]{0,199}$/;

export function isModelId(id: unknown): id is string {
  if (typeof id !== 'string') return false;
  const parts = id.split('/');
  return parts.length === 2 && parts.every((part) => ID_PART.test(part));
}

function assertModelId(id: unknown): asserts id is string {
  if (!isModelId(id)) {
    throw new ModelError('invalid_id', `"${String(id)}" is not a model id: expected the form organisation/name.`);
  }
}

function isFilePath(file: string): boolean {
  const parts = file.split('/');
  return parts.length <= 8 && parts.every((part) => FILE_SEGMENT.test(part)) && file !== MANIFEST_FILE;
}

/** The installed folder of a model; refuses anything that is not a plain `org/name`. */
export function modelDir(modelsDir: string, id: string): string {
  assertModelId(id);
  const root = path.resolve(modelsDir);
  const dir = path.join(root, ...id.split('/'));
  // Belt and braces: the id pattern already rules out separators and dot segments.
  if (path.dirname(path.dirname(dir)) !== root) throw new ModelError('invalid_id', `"${id}" is not a model id.`);
  return dir;
}

function stagingDir(modelsDir: string, id: string): string {
  return path.join(path.resolve(modelsDir), STAGING_DIR, ...id.split('/'));
}

function partialDir(modelsDir: string, id: string): string {
  return path.join(modelDir(modelsDir, id), PARTIAL_DIR);
}

function normaliseHost(host: string | undefined): string {
  const raw = (host ?? DEFAULT_MODEL_HOST).trim();
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ModelError('network', `The model host "${raw}" is not a web address.`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ModelError('network', `The model host "${raw}" must start with https://.`);
  }
  return url.href.replace(/\/+$/, '');
}

// ── one download at a time per model ─────────────────────────────────────────────────────────

const active = new Map<string, true>();

function activeKey(modelsDir: string, id: string): string {
  return `${path.resolve(modelsDir)}\0${id}`;
}

export function isDownloading(modelsDir: string, id: string): boolean {
  return active.has(activeKey(modelsDir, id));
}

/**
 * Downloads, verifies and installs one model. Resolves with the written manifest; rejects with a
 * ModelError. A cancelled or failed download keeps what verified or partially arrived in
 * `.partial/`, so the next call continues; an installed older version stays as it was.
 */
export async function downloadModel(entry: CatalogEntry, options: DownloadOptions): Promise<ModelManifest> {
  assertModelId(entry.id);
  const key = activeKey(options.modelsDir, entry.id);
  if (active.has(key)) {
    throw new ModelError('busy', `${entry.name} is already downloading.`);
  }
  active.set(key, true);
  try {
    return await new Download(entry, options).run();
  } finally {
    active.delete(key);
  }
}

class Download {
  private readonly host: string;
  private readonly fetch: typeof fetch;
  private readonly signal: AbortSignal;
  private readonly meter: ProgressMeter;
  private readonly partial: string;

  constructor(
    private readonly entry: CatalogEntry,
    private readonly options: DownloadOptions,
  ) {
    this.host = normaliseHost(options.host);
    this.fetch = options.fetch ?? globalThis.fetch;
    this.signal = options.signal ?? new AbortController().signal;
    this.partial = partialDir(options.modelsDir, entry.id);
    this.meter = new ProgressMeter(entry.id, options.progressIntervalMs ?? 250, options.onProgress);
    for (const file of [...entry.files, ...entry.optionalFiles]) {
      if (!isFilePath(file)) throw new ModelError('invalid_id', `The catalogue entry for ${entry.id} names an unsafe file "${file}".`);
    }
  }

  async run(): Promise<ModelManifest> {
    this.throwIfCancelled();
    this.meter.emit({ phase: 'checking' }, true);
    await settle(this.options.modelsDir, this.entry.id);
    const remote = await this.listing();
    const plan = this.plan(remote);
    const done = await this.reconcilePartials(plan);
    const total = plan.reduce((sum, file) => sum + file.size, 0);
    const already = plan.reduce((sum, file) => sum + (done.get(file.path) ?? 0), 0);
    await this.checkDiskSpace(total - already);
    await this.writePartialRecord(plan);
    this.meter.start(total, already, plan.length);

    const verified: { path: string; size: number; sha256: string }[] = [];
    for (const [index, file] of plan.entries()) {
      this.meter.emit({ phase: 'downloading', file: file.path, fileIndex: index }, true);
      verified.push({ path: file.path, size: file.size, sha256: await this.fetchFile(file) });
    }
    this.throwIfCancelled();
    this.meter.emit({ phase: 'installing', file: undefined, fileIndex: plan.length }, true);
    const manifest = await this.install(verified);
    this.meter.finish();
    return manifest;
  }

  // ── listing ──

  private async listing(): Promise<Map<string, RemoteFile>> {
    const files = new Map<string, RemoteFile>();
    let url: string | undefined = `${this.host}/api/models/${this.entry.id}/tree/main?recursive=true`;
    while (url) {
      const listUrl = url;
      const timeout = this.options.idleTimeoutMs ?? 60_000;
      const response = await this.withRetries('the file list', () => this.request(listUrl, {}, AbortSignal.timeout(timeout)));
      if (response.status === 401 || response.status === 403 || response.status === 404) {
        await response.body?.cancel();
        // The hub answers 401 rather than 404 to anonymous requests for repositories it does not have.
        throw new ModelError('model_not_found', `The model "${this.entry.id}" was not found on ${hostLabel(this.host)}.`);
      }
      if (!response.ok) {
        await response.body?.cancel();
        throw new ModelError('network', `${hostLabel(this.host)} answered HTTP ${response.status} when asked for the files of "${this.entry.id}".`);
      }
      let items: unknown;
      try {
        items = await response.json();
      } catch {
        throw new ModelError('network', `${hostLabel(this.host)} sent a file list for "${this.entry.id}" that is not JSON.`);
      }
      if (!Array.isArray(items)) {
        throw new ModelError('network', `${hostLabel(this.host)} sent a file list for "${this.entry.id}" in an unknown format.`);
      }
      for (const item of items) {
        const file = parseListed(item);
        if (file) files.set(file.path, file);
      }
      url = nextPage(response.headers.get('link'), this.host);
    }
    return files;
  }

  private plan(remote: Map<string, RemoteFile>): RemoteFile[] {
    const plan: RemoteFile[] = [];
    for (const file of this.entry.files) {
      const found = remote.get(file);
      if (!found) {
        throw new ModelError(
          'model_not_found',
          `${hostLabel(this.host)} has "${this.entry.id}" but not its file ${file}; the model may have been reorganised.`,
          file,
        );
      }
      plan.push(found);
    }
    for (const file of this.entry.optionalFiles) {
      const found = remote.get(file);
      if (found) plan.push(found);
    }
    return plan;
  }

  /**
   * Keeps partial files only when they belong to the same remote version: resuming a file that
   * changed on the host would splice two versions together.
   */
  private async reconcilePartials(plan: RemoteFile[]): Promise<Map<string, number>> {
    const previous = await readJson(path.join(this.partial, PARTIAL_RECORD));
    const known = isObject(previous) && isObject(previous.files) ? previous.files : {};
    const have = new Map<string, number>();
    for (const file of plan) {
      const target = path.join(this.partial, ...file.path.split('/'));
      const size = await fileSize(target);
      if (size === undefined) continue;
      const before = known[file.path];
      const same =
        isObject(before) && before.size === file.size && before.sha256 === file.sha256 && before.gitSha1 === file.gitSha1;
      if (!same || size > file.size) await fs.rm(target, { force: true });
      else have.set(file.path, size);
    }
    return have;
  }

  private async writePartialRecord(plan: RemoteFile[]): Promise<void> {
    const record = { files: Object.fromEntries(plan.map((f) => [f.path, { size: f.size, sha256: f.sha256, gitSha1: f.gitSha1 }])) };
    await this.disk(async () => {
      await fs.mkdir(this.partial, { recursive: true });
      await fs.writeFile(path.join(this.partial, PARTIAL_RECORD), JSON.stringify(record));
    });
  }

  private async checkDiskSpace(remaining: number): Promise<void> {
    const margin = this.options.diskMarginBytes ?? DEFAULT_DISK_MARGIN_BYTES;
    const free = await (this.options.freeSpace ?? ((dir: string) => freeSpaceAt(dir).catch((error: unknown) => Promise.reject(diskError(error)))))(this.options.modelsDir);
    if (free < remaining + margin) {
      throw new ModelError(
        'disk_full',
        `Not enough free disk space for ${this.entry.name}: it needs ${formatBytes(remaining)} more` +
          ` plus ${formatBytes(margin)} to spare, and ${formatBytes(free)} is free.`,
      );
    }
  }

  // ── one file ──

  /** Fetches one file into `.partial/`, resuming what is there; returns its verified sha256. */
  private async fetchFile(file: RemoteFile): Promise<string> {
    const target = path.join(this.partial, ...file.path.split('/'));
    await this.disk(() => fs.mkdir(path.dirname(target), { recursive: true }));
    const state = { have: (await fileSize(target)) ?? 0, hash: new FileHash(file.size) };
    if (state.have > 0) await state.hash.updateFromFile(target, state.have, this.signal);
    else await this.disk(() => fs.writeFile(target, ''));
    this.throwIfCancelled();

    const retries = this.options.retries ?? 4;
    const baseDelay = this.options.retryDelayMs ?? 1000;
    let failures = 0;
    while (state.have < file.size) {
      const before = state.have;
      try {
        await this.fetchInto(file, target, state);
        // A response may end early without an error: a CDN serving bounded ranges, or a body
        // without a declared length. Ask for the rest; a host that has no more answers 416.
        if (state.have < file.size) throw new RetryableError('the response ended early');
      } catch (error) {
        if (this.signal.aborted) throw this.cancelled();
        if (!isRetryable(error)) throw error;
        failures = state.have > before ? 1 : failures + 1;
        if (failures > retries) {
          throw new ModelError(
            'network',
            `Downloading ${file.path} of ${this.entry.name} kept failing (${describe(error)}). What arrived is kept; try again later.`,
            file.path,
          );
        }
        try {
          await sleep(baseDelay * 2 ** (failures - 1), undefined, { signal: this.signal });
        } catch {
          throw this.cancelled();
        }
      }
    }

    const sha256 = state.hash.sha256();
    const onDisk = (await fileSize(target)) ?? -1;
    const problem =
      onDisk !== file.size
        ? `has ${onDisk} bytes on disk but should have ${file.size}`
        : file.sha256 && sha256 !== file.sha256
          ? 'does not match its sha256 checksum'
          : file.gitSha1 && state.hash.gitSha1() !== file.gitSha1
            ? 'does not match its checksum'
            : undefined;
    if (problem) {
      await fs.rm(target, { force: true });
      throw new ModelError(
        'integrity',
        `${file.path} of ${this.entry.name} ${problem}, so it was discarded. ` +
          'The download or the model host corrupted it; try again, or another model host.',
        file.path,
      );
    }
    return sha256;
  }

  /** One HTTP request for the rest of a file; appends and hashes as bytes arrive. */
  private async fetchInto(file: RemoteFile, target: string, state: { have: number; hash: FileHash }): Promise<void> {
    const url = `${this.host}/${this.entry.id}/resolve/main/${file.path.split('/').map(encodeURIComponent).join('/')}`;
    const headers: Record<string, string> = {};
    if (state.have > 0) headers.range = `bytes=${state.have}-`;
    const idle = new IdleTimer(this.options.idleTimeoutMs ?? 60_000);
    try {
      const response = await this.request(url, headers, idle.signal);
      const status = response.status;
      if (status === 401 || status === 403 || status === 404) {
        await response.body?.cancel();
        throw new ModelError('model_not_found', `${hostLabel(this.host)} does not give out ${file.path} of "${this.entry.id}" (HTTP ${status}).`, file.path);
      }
      if (status === 416) {
        // The host has no bytes past what we hold, yet its listing promised more.
        await response.body?.cancel();
        await fs.rm(target, { force: true });
        throw new ModelError(
          'integrity',
          `${file.path} of ${this.entry.name} on ${hostLabel(this.host)} is shorter than its listing says (${file.size} bytes). The file was discarded.`,
          file.path,
        );
      }
      if (status === 429 || status >= 500) {
        await response.body?.cancel();
        throw new RetryableError(`HTTP ${status}`);
      }
      if (status !== 200 && status !== 206) {
        await response.body?.cancel();
        throw new ModelError('network', `${hostLabel(this.host)} answered HTTP ${status} for ${file.path} of "${this.entry.id}".`, file.path);
      }
      if (status === 206 && rangeStart(response.headers.get('content-range')) !== state.have) {
        await response.body?.cancel();
        await this.restart(target, state, file.size);
        throw new RetryableError('the host sent a different part of the file than asked for');
      }
      const declared = declaredSize(response);
      if (declared !== undefined && declared !== file.size) {
        await response.body?.cancel();
        await fs.rm(target, { force: true });
        throw new ModelError(
          'integrity',
          `${file.path} of ${this.entry.name} has ${declared} bytes on ${hostLabel(this.host)} but its file list says ${file.size}. ` +
            'The file was discarded; the host may be mid-update, try again later or another model host.',
          file.path,
        );
      }
      if (status === 200 && state.have > 0) {
        // The host ignored the Range request and is sending the whole file: start over with it.
        await this.restart(target, state, file.size);
      }
      if (!response.body) throw new RetryableError('an empty response');
      const handle = await this.disk(() => fs.open(target, 'a'));
      try {
        for await (const chunk of response.body) {
          idle.touch();
          const bytes = chunk as Uint8Array;
          if (state.have + bytes.length > file.size) {
            await handle.close().catch(() => undefined);
            await fs.rm(target, { force: true });
            throw new ModelError(
              'integrity',
              `${file.path} of ${this.entry.name} is larger than the ${file.size} bytes its listing says. The file was discarded.`,
              file.path,
            );
          }
          await this.disk(() => writeAll(handle, bytes));
          state.hash.update(bytes);
          state.have += bytes.length;
          this.meter.add(bytes.length);
        }
        // So a crash right after the rename cannot leave a model folder with empty files.
        if (state.have === file.size) await this.disk(() => handle.sync());
      } finally {
        await handle.close().catch(() => undefined);
      }
    } catch (error) {
      if (idle.fired && !this.signal.aborted) throw new RetryableError(`no data for ${Math.round(idle.ms / 1000)} s`);
      throw error;
    } finally {
      idle.stop();
    }
  }

  private async restart(target: string, state: { have: number; hash: FileHash }, size: number): Promise<void> {
    await this.disk(() => fs.writeFile(target, ''));
    this.meter.add(-state.have);
    state.have = 0;
    state.hash = new FileHash(size);
  }

  // ── install ──

  private async install(files: { path: string; size: number; sha256: string }[]): Promise<ModelManifest> {
    const { modelsDir } = this.options;
    const id = this.entry.id;
    const manifest: ModelManifest = {
      format: 1,
      id,
      task: this.entry.task,
      dtype: this.entry.dtype,
      host: this.host,
      installedAt: new Date().toISOString(),
      files,
    };
    const staging = stagingDir(modelsDir, id);
    await this.disk(async () => {
      await fs.rm(staging, { recursive: true, force: true });
      for (const file of files) {
        const to = path.join(staging, ...file.path.split('/'));
        await fs.mkdir(path.dirname(to), { recursive: true });
        await fs.rename(path.join(this.partial, ...file.path.split('/')), to);
      }
      await fs.writeFile(path.join(staging, MANIFEST_FILE), JSON.stringify(manifest, null, 2));
    });
    // From here the verified set is complete on disk: settle() finishes the swap after a crash.
    await this.disk(() => swapIn(modelsDir, id), 'The model folder is in use; close what uses the model and download again.');
    return manifest;
  }

  // ── plumbing ──

  private async request(url: string, headers: Record<string, string>, extra?: AbortSignal): Promise<Response> {
    const signal = extra ? AbortSignal.any([this.signal, extra]) : this.signal;
    try {
      // identity: byte counts and Range offsets must refer to the file, not a compressed form of it.
      return await this.fetch(url, { headers: { 'accept-encoding': 'identity', ...headers }, redirect: 'follow', signal });
    } catch (error) {
      if (this.signal.aborted) throw this.cancelled();
      throw new RetryableError(describe(error));
    }
  }

  private async withRetries(what: string, attempt: () => Promise<Response>): Promise<Response> {
    const retries = this.options.retries ?? 4;
    const baseDelay = this.options.retryDelayMs ?? 1000;
    for (let failures = 0; ; failures++) {
      let reason: string;
      try {
        const response = await attempt();
        if (response.status !== 429 && response.status < 500) return response;
        await response.body?.cancel();
        reason = `HTTP ${response.status}`;
      } catch (error) {
        if (!isRetryable(error)) throw error;
        reason = describe(error);
      }
      if (failures >= retries) {
        throw new ModelError(
          'network',
          `Could not get ${what} of "${this.entry.id}" from ${hostLabel(this.host)} (${reason}). ` +
            'Check the connection and the model host setting.',
        );
      }
      try {
        await sleep(baseDelay * 2 ** failures, undefined, { signal: this.signal });
      } catch {
        throw this.cancelled();
      }
    }
  }

  /** Runs a filesystem step, turning its errors into ModelErrors a person can act on. */
  private async disk<T>(step: () => Promise<T>, busyMessage?: string): Promise<T> {
    try {
      return await step();
    } catch (error) {
      throw diskError(error, busyMessage);
    }
  }

  private throwIfCancelled(): void {
    if (this.signal.aborted) throw this.cancelled();
  }

  private cancelled(): ModelError {
    return new ModelError('cancelled', `The download of ${this.entry.name} was stopped. What arrived is kept, and the next download continues from there.`);
  }
}

/** Renames the staged set over the installed folder; both renames stay on one filesystem. */
async function swapIn(modelsDir: string, id: string): Promise<void> {
  const dir = modelDir(modelsDir, id);
  const staging = stagingDir(modelsDir, id);
  const [org, name] = id.split('/') as [string, string];
  const trash = path.join(path.resolve(modelsDir), TRASH_DIR, org, `${name}-${randomUUID().slice(0, 8)}`);
  if (await exists(dir)) {
    await fs.mkdir(path.dirname(trash), { recursive: true });
    await fs.rename(dir, trash);
  }
  await fs.mkdir(path.dirname(dir), { recursive: true });
  await fs.rename(staging, dir);
  await fs.rm(trash, { recursive: true, force: true });
  await removeEmpty(path.dirname(staging), path.dirname(trash), path.dirname(path.dirname(staging)), path.dirname(path.dirname(trash)));
}

/** Finishes a swap a crash interrupted and clears leftovers of replaced versions. */
async function settle(modelsDir: string, id: string): Promise<void> {
  const dir = modelDir(modelsDir, id);
  const staging = stagingDir(modelsDir, id);
  if (!(await exists(dir)) && (await exists(path.join(staging, MANIFEST_FILE)))) {
    await fs.mkdir(path.dirname(dir), { recursive: true });
    await fs.rename(staging, dir).catch(() => undefined);
  }
  const [org, name] = id.split('/') as [string, string];
  const trashOrg = path.join(path.resolve(modelsDir), TRASH_DIR, org);
  for (const entry of await fs.readdir(trashOrg).catch(() => [] as string[])) {
    if (entry.startsWith(`${name}-`)) await fs.rm(path.join(trashOrg, entry), { recursive: true, force: true }).catch(() => undefined);
  }
}

// ── installed models ─────────────────────────────────────────────────────────────────────────

/** Models with a manifest, i.e. downloaded completely by this module; sorted by id. */
export async function installedModels(modelsDir: string): Promise<InstalledModel[]> {
  const root = path.resolve(modelsDir);
  const ids = new Set<string>();
  for (const base of [root, path.join(root, STAGING_DIR)]) {
    for (const org of await readdirSafe(base)) {
      if (!org.isDirectory() || !ID_PART.test(org.name)) continue;
      for (const name of await readdirSafe(path.join(base, org.name))) {
        const id = `${org.name}/${name.name}`;
        if (name.isDirectory() && isModelId(id)) ids.add(id);
      }
    }
  }
  const found: InstalledModel[] = [];
  for (const id of [...ids].sort()) {
    if (!isDownloading(modelsDir, id)) await settle(modelsDir, id).catch(() => undefined);
    const dir = modelDir(modelsDir, id);
    const manifest = parseManifest(await readJson(path.join(dir, MANIFEST_FILE)), id);
    if (!manifest) continue;
    found.push({ id, dir, manifest, bytesOnDisk: await folderSize(dir, PARTIAL_DIR) });
  }
  return found;
}

/** Bytes of an unfinished download waiting in `.partial/` (0 when there is none). */
export async function partialBytes(modelsDir: string, id: string): Promise<number> {
  const dir = partialDir(modelsDir, id);
  return (await exists(dir)) ? folderSize(dir, PARTIAL_RECORD) : 0;
}

/**
 * Checks an installed model's files against its manifest: by size (fast, the default) or also by
 * sha256 (`full`, reads every byte). Resolves with the manifest or rejects naming the bad file.
 */
export async function checkModel(modelsDir: string, id: string, options: { full?: boolean } = {}): Promise<ModelManifest> {
  const dir = modelDir(modelsDir, id);
  const manifest = parseManifest(await readJson(path.join(dir, MANIFEST_FILE)), id);
  if (!manifest) throw new ModelError('not_installed', `The model "${id}" is not downloaded.`);
  for (const file of manifest.files) {
    const full = path.join(dir, ...file.path.split('/'));
    const size = await fileSize(full);
    if (size === undefined) {
      throw new ModelError('integrity', `${file.path} of "${id}" is missing. Download the model again.`, file.path);
    }
    if (size !== file.size) {
      throw new ModelError(
        'integrity',
        `${file.path} of "${id}" is ${size < file.size ? 'truncated' : 'too long'} (${size} of ${file.size} bytes). Download the model again.`,
        file.path,
      );
    }
    if (options.full && (await sha256OfFile(full)) !== file.sha256) {
      throw new ModelError('integrity', `${file.path} of "${id}" is damaged (its checksum changed). Download the model again.`, file.path);
    }
  }
  return manifest;
}

/** Removes a model with any unfinished download of it; false when there was nothing to remove. */
export async function deleteModel(modelsDir: string, id: string): Promise<boolean> {
  const dir = modelDir(modelsDir, id);
  if (isDownloading(modelsDir, id)) throw new ModelError('busy', `"${id}" is downloading; stop the download before removing it.`);
  const staging = stagingDir(modelsDir, id);
  const found = (await exists(dir)) || (await exists(staging));
  try {
    await fs.rm(dir, { recursive: true, force: true });
    await fs.rm(staging, { recursive: true, force: true });
  } catch (error) {
    throw diskError(error, `"${id}" is in use; close what uses the model and try again.`);
  }
  await removeEmpty(path.dirname(dir), path.dirname(staging), path.dirname(path.dirname(staging)));
  return found;
}

// ── a download manager for the host ──────────────────────────────────────────────────────────

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

// ── progress ─────────────────────────────────────────────────────────────────────────────────

const SPEED_TIME_CONSTANT_MS = 3000;

class ProgressMeter {
  private total = 0;
  private done = 0;
  private fileCount = 0;
  private speed = 0;
  private lastEmit = 0;
  private sampleAt = 0;
  private sampleBytes = 0;
  private current: Pick<DownloadProgress, 'phase' | 'file' | 'fileIndex'> = { phase: 'checking', fileIndex: 0 };

  constructor(
    private readonly id: string,
    private readonly intervalMs: number,
    private readonly listener?: (progress: DownloadProgress) => void,
  ) {}

  start(total: number, already: number, fileCount: number): void {
    this.total = total;
    this.done = already;
    this.fileCount = fileCount;
    this.sampleAt = performance.now();
  }

  add(bytes: number): void {
    this.done += bytes;
    if (bytes > 0) this.sampleBytes += bytes;
    this.emit({}, false);
  }

  finish(): void {
    this.done = this.total;
    this.emit({ phase: 'done', file: undefined }, true);
  }

  emit(change: Partial<Pick<DownloadProgress, 'phase' | 'file' | 'fileIndex'>>, force: boolean): void {
    this.current = { ...this.current, ...change };
    const now = performance.now();
    if (!force && now - this.lastEmit < this.intervalMs) return;
    this.sample(now);
    this.lastEmit = now;
    if (!this.listener) return;
    const left = this.total - this.done;
    try {
      this.listener({
        id: this.id,
        ...this.current,
        fileCount: this.fileCount,
        bytesDone: this.done,
        bytesTotal: this.total,
        bytesPerSecond: Math.round(this.speed),
        secondsLeft: this.current.phase === 'done' ? 0 : this.speed > 0 ? left / this.speed : null,
      });
    } catch {
      // The listener's problem, not the download's.
    }
  }

  /** Exponential smoothing over about three seconds: steady numbers without lagging a real change. */
  private sample(now: number): void {
    const elapsed = now - this.sampleAt;
    if (elapsed < 20 || this.sampleBytes === 0) return;
    const instant = (this.sampleBytes * 1000) / elapsed;
    const weight = this.speed === 0 ? 1 : 1 - Math.exp(-elapsed / SPEED_TIME_CONSTANT_MS);
    this.speed += (instant - this.speed) * weight;
    this.sampleAt = now;
    this.sampleBytes = 0;
  }
}

// ── helpers ──────────────────────────────────────────────────────────────────────────────────

/** A dropped connection, a timeout or a server hiccup: worth another attempt. */
class RetryableError extends Error {}

/** Disk and protocol problems arrive as ModelErrors; anything else came from the network. */
function isRetryable(error: unknown): boolean {
  return !(error instanceof ModelError);
}

function diskError(error: unknown, busyMessage?: string): ModelError {
  if (error instanceof ModelError) return error;
  const code = (error as { code?: string })?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    return new ModelError('disk_full', 'The disk filled up during the download. Free some space and try again; what arrived is kept.');
  }
  if (busyMessage && (code === 'EBUSY' || code === 'EPERM' || code === 'EACCES')) return new ModelError('io', busyMessage);
  return new ModelError('io', `Could not write the model files (${describe(error)}).`);
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error && cause.message ? `${error.message}: ${cause.message}` : error.message;
}

class FileHash {
  private readonly sha256Hash: Hash = createHash('sha256');
  private readonly sha1Hash: Hash;

  constructor(size: number) {
    this.sha1Hash = createHash('sha1').update(`blob ${size}\0`);
  }

  update(bytes: Uint8Array): void {
    this.sha256Hash.update(bytes);
    this.sha1Hash.update(bytes);
  }

  /** Stops early when `signal` aborts; the caller notices and discards this hash. */
  async updateFromFile(file: string, length: number, signal?: AbortSignal): Promise<void> {
    for await (const chunk of createReadStream(file, { start: 0, end: length - 1 })) {
      if (signal?.aborted) return;
      this.update(chunk as Buffer);
    }
  }

  sha256(): string {
    return this.sha256Hash.copy().digest('hex');
  }

  gitSha1(): string {
    return this.sha1Hash.copy().digest('hex');
  }
}

/** Aborts a request that has been silent for `ms`: a stalled connection would otherwise hang forever. */
class IdleTimer {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout;
  fired = false;

  constructor(readonly ms: number) {
    this.timer = this.arm();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  touch(): void {
    clearTimeout(this.timer);
    this.timer = this.arm();
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  private arm(): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.fired = true;
      this.controller.abort();
    }, this.ms);
    timer.unref();
    return timer;
  }
}

function parseListed(item: unknown): RemoteFile | undefined {
  if (!isObject(item) || item.type !== 'file' || typeof item.path !== 'string') return undefined;
  const lfs = isObject(item.lfs) ? item.lfs : undefined;
  const size = lfs && typeof lfs.size === 'number' ? lfs.size : item.size;
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) return undefined;
  const file: RemoteFile = { path: item.path, size };
  if (lfs && typeof lfs.oid === 'string' && /^[0-9a-f]{64}$/.test(lfs.oid)) file.sha256 = lfs.oid;
  else if (!lfs && typeof item.oid === 'string' && /^[0-9a-f]{40}$/.test(item.oid)) file.gitSha1 = item.oid;
  return file;
}

function nextPage(link: string | null, host: string): string | undefined {
  const match = link && /<([^>]+)>\s*;\s*rel="?next"?/.exec(link);
  if (!match?.[1]) return undefined;
  try {
    const next = new URL(match[1], host);
    return next.origin === new URL(host).origin ? next.href : undefined;
  } catch {
    return undefined;
  }
}

/** The whole file's size as the response declares it (Content-Range total, or Content-Length of a 200). */
function declaredSize(response: Response): number | undefined {
  if (response.status === 206) {
    const match = /\/(\d+)$/.exec(response.headers.get('content-range')?.trim() ?? '');
    return match ? Number(match[1]) : undefined;
  }
  // A compressed body's length says nothing about the file.
  const encoding = response.headers.get('content-encoding');
  if (encoding && encoding !== 'identity') return undefined;
  const length = response.headers.get('content-length');
  return length && /^\d+$/.test(length) ? Number(length) : undefined;
}

function rangeStart(contentRange: string | null): number | undefined {
  const match = contentRange && /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(contentRange.trim());
  return match ? Number(match[1]) : undefined;
}

function parseManifest(value: unknown, id: string): ModelManifest | undefined {
  if (!isObject(value) || value.format !== 1 || value.id !== id || !Array.isArray(value.files)) return undefined;
  const filesOk = value.files.every(
    (f: unknown) => isObject(f) && typeof f.path === 'string' && isFilePath(f.path) && typeof f.size === 'number' && typeof f.sha256 === 'string',
  );
  return filesOk ? (value as unknown as ModelManifest) : undefined;
}

function hostLabel(host: string): string {
  try {
    return new URL(host).host;
  } catch {
    return host;
  }
}

/** Decimal units, as the hub and operating systems show sizes. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(1)} GB`;
  if (bytes >= 1e7) return `${Math.round(bytes / 1e6)} MB`;
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

/** Free bytes on the disk holding `dir`, which may not exist yet (the models folder before the first download). */
export async function freeSpaceAt(dir: string): Promise<number> {
  // statfs needs an existing path: walk up to the nearest one.
  let at = path.resolve(dir);
  for (;;) {
    try {
      const stats = await fs.statfs(at);
      return stats.bavail * stats.bsize;
    } catch (error) {
      const parent = path.dirname(at);
      if ((error as { code?: string }).code !== 'ENOENT' || parent === at) throw error;
      at = parent;
    }
  }
}

async function writeAll(handle: FileHandle, bytes: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset);
    offset += bytesWritten;
  }
}

async function sha256OfFile(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function folderSize(dir: string, skip: string): Promise<number> {
  let total = 0;
  for (const entry of await readdirSafe(dir)) {
    if (entry.name === skip) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) total += await folderSize(full, skip);
    else if (entry.isFile()) total += (await fileSize(full)) ?? 0;
  }
  return total;
}

async function removeEmpty(...dirs: string[]): Promise<void> {
  // rmdir refuses non-empty folders, which is exactly the check wanted.
  for (const dir of dirs) await fs.rmdir(dir).catch(() => undefined);
}

async function readdirSafe(dir: string) {
  return fs.readdir(dir, { withFileTypes: true }).catch(() => []);
}

async function fileSize(file: string): Promise<number | undefined> {
  const stat = await fs.stat(file).catch(() => undefined);
  return stat?.isFile() ? stat.size : undefined;
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}

async function readJson(file: string): Promise<unknown> {
  try {
    return JSON.parse(await fs.readFile(file, 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
