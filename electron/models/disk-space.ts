// The free-space check before a download: it starts only when what it still needs fits on the disk
// with a margin to spare.
import fs from 'node:fs/promises';
import path from 'node:path';
import { ModelError } from './catalog.js';
import { diskError } from './disk-io.js';

/** Room left on the disk after a download: a full disk breaks the database and everything else. */
export const DEFAULT_DISK_MARGIN_BYTES = 200 * 1_000_000;

export interface DiskSpaceOptions {
  /** Free bytes on the filesystem holding `dir` (which may not exist yet). */
  freeSpace?: (dir: string) => Promise<number>;
  diskMarginBytes?: number;
}

/** Refuses (disk_full) when `remaining` bytes plus the margin do not fit beside what is on the disk. */
export async function checkDiskSpace(modelsDir: string, modelName: string, remaining: number, options: DiskSpaceOptions): Promise<void> {
  const margin = options.diskMarginBytes ?? DEFAULT_DISK_MARGIN_BYTES;
  const free = await (options.freeSpace ?? ((dir: string) => freeSpaceAt(dir).catch((error: unknown) => Promise.reject(diskError(error)))))(modelsDir);
  if (free < remaining + margin) {
    throw new ModelError(
      'disk_full',
      `Not enough free disk space for ${modelName}: it needs ${formatBytes(remaining)} more` +
        ` plus ${formatBytes(margin)} to spare, and ${formatBytes(free)} is free.`,
    );
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
