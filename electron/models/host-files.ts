// What a model host says a model's files are, and whether what arrived is them. The listing
// (`/api/models/<id>/tree/main`) gives each file's size and either its sha256 (the LFS oid) or git's
// blob id; a downloaded file is kept only when its size and checksum match.
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import { ModelError, type CatalogEntry } from './catalog.js';
import { fileSize, isObject } from './disk-io.js';
import type { HostSession } from './host-session.js';

export interface RemoteFile {
  path: string;
  size: number;
  /** Known for LFS files (the hub lists the content's sha256 as the LFS oid). */
  sha256?: string;
  /** Known for files outside LFS: git's blob id, sha1("blob <size>\0" + content). */
  gitSha1?: string;
}

/** Every file of the model's main branch, following the listing's pages. */
export async function listRemoteFiles(session: HostSession, id: string): Promise<Map<string, RemoteFile>> {
  const files = new Map<string, RemoteFile>();
  let url: string | undefined = `${session.host}/api/models/${id}/tree/main?recursive=true`;
  while (url) {
    const listUrl = url;
    const response = await session.withRetries('the file list', () => session.request(listUrl, {}, AbortSignal.timeout(session.idleTimeoutMs)));
    if (response.status === 401 || response.status === 403 || response.status === 404) {
      await response.body?.cancel();
      // The hub answers 401 rather than 404 to anonymous requests for repositories it does not have.
      throw new ModelError('model_not_found', `The model "${id}" was not found on ${session.label}.`);
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new ModelError('network', `${session.label} answered HTTP ${response.status} when asked for the files of "${id}".`);
    }
    let items: unknown;
    try {
      items = await response.json();
    } catch {
      throw new ModelError('network', `${session.label} sent a file list for "${id}" that is not JSON.`);
    }
    if (!Array.isArray(items)) {
      throw new ModelError('network', `${session.label} sent a file list for "${id}" in an unknown format.`);
    }
    for (const item of items) {
      const file = parseListed(item);
      if (file) files.set(file.path, file);
    }
    url = nextPage(response.headers.get('link'), session.host);
  }
  return files;
}

/** The catalogue entry's files as the host lists them: every required one, and the optional ones it has. */
export function planFiles(entry: CatalogEntry, remote: Map<string, RemoteFile>, hostName: string): RemoteFile[] {
  const plan: RemoteFile[] = [];
  for (const file of entry.files) {
    const found = remote.get(file);
    if (!found) {
      throw new ModelError('model_not_found', `${hostName} has "${entry.id}" but not its file ${file}; the model may have been reorganised.`, file);
    }
    plan.push(found);
  }
  for (const file of entry.optionalFiles) {
    const found = remote.get(file);
    if (found) plan.push(found);
  }
  return plan;
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

/** Both checksums a listing may name, computed as the bytes arrive. */
export class FileHash {
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

/**
 * Checks a fetched file against its listing; a file that does not match is removed and the error
 * says so. Returns the file's sha256 for the manifest.
 */
export async function checkArrivedFile(target: string, file: RemoteFile, hash: FileHash, modelName: string): Promise<string> {
  const sha256 = hash.sha256();
  const onDisk = (await fileSize(target)) ?? -1;
  const problem =
    onDisk !== file.size
      ? `has ${onDisk} bytes on disk but should have ${file.size}`
      : file.sha256 && sha256 !== file.sha256
        ? 'does not match its sha256 checksum'
        : file.gitSha1 && hash.gitSha1() !== file.gitSha1
          ? 'does not match its checksum'
          : undefined;
  if (problem) {
    await fs.rm(target, { force: true });
    throw new ModelError(
      'integrity',
      `${file.path} of ${modelName} ${problem}, so it was discarded. ` + 'The download or the model host corrupted it; try again, or another model host.',
      file.path,
    );
  }
  return sha256;
}

export async function sha256OfFile(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
