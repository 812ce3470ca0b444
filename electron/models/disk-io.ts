// The small filesystem steps the downloader and the installed-model checks share, and the errors
// a person can act on that a failed step turns into.
import fs, { type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { ModelError } from './catalog.js';

/** An error's message with its cause's, for a log line or a message that says what went wrong. */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error && cause.message ? `${error.message}: ${cause.message}` : error.message;
}

export function diskError(error: unknown, busyMessage?: string): ModelError {
  if (error instanceof ModelError) return error;
  const code = (error as { code?: string })?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    return new ModelError('disk_full', 'The disk filled up during the download. Free some space and try again; what arrived is kept.');
  }
  if (busyMessage && (code === 'EBUSY' || code === 'EPERM' || code === 'EACCES')) return new ModelError('io', busyMessage);
  return new ModelError('io', `Could not write the model files (${describeError(error)}).`);
}

/** Runs a filesystem step, turning its errors into ModelErrors a person can act on. */
export async function onDisk<T>(step: () => Promise<T>, busyMessage?: string): Promise<T> {
  try {
    return await step();
  } catch (error) {
    throw diskError(error, busyMessage);
  }
}

export async function writeAll(handle: FileHandle, bytes: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset);
    offset += bytesWritten;
  }
}

export async function folderSize(dir: string, skip: string): Promise<number> {
  let total = 0;
  for (const entry of await readdirSafe(dir)) {
    if (entry.name === skip) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) total += await folderSize(full, skip);
    else if (entry.isFile()) total += (await fileSize(full)) ?? 0;
  }
  return total;
}

export async function removeEmpty(...dirs: string[]): Promise<void> {
  // rmdir refuses non-empty folders, which is exactly the check wanted.
  for (const dir of dirs) await fs.rmdir(dir).catch(() => undefined);
}

export async function readdirSafe(dir: string) {
  return fs.readdir(dir, { withFileTypes: true }).catch(() => []);
}

export async function fileSize(file: string): Promise<number | undefined> {
  const stat = await fs.stat(file).catch(() => undefined);
  return stat?.isFile() ? stat.size : undefined;
}

export async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}

export async function readJson(file: string): Promise<unknown> {
  try {
    return JSON.parse(await fs.readFile(file, 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
