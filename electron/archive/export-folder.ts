// `anima export`: a data folder to an archive, without starting the app — the folder's lock keeps a
// running Anima away (data_dir_locked), and nothing runs in the background while the export reads.
import fs from 'node:fs';
import path from 'node:path';
import { ApiError } from '../../shared/api.js';
import { attachmentsDir } from '../attachments/store.js';
import { avatarDir } from '../companion/avatar.js';
import { acquireLock } from '../db/lock.js';
import { databaseDir, openDatabase } from '../db/open.js';
import { exportArchive, type ExportProgress, type ExportResult } from './export.js';

export interface ExportFolderOptions {
  dataDir: string;
  out: string;
  appVersion: string;
  /** Replace an existing file at `out` (only once the new archive is complete and checked). */
  force?: boolean;
  signal?: AbortSignal;
  onProgress?: (progress: ExportProgress) => void;
  log?: (message: string) => void;
}

export async function exportFolder(o: ExportFolderOptions): Promise<ExportResult> {
  const out = path.resolve(o.out);
  if (!fs.existsSync(path.join(databaseDir(o.dataDir), 'PG_VERSION'))) {
    throw new ApiError('not_found', `There is no Anima data in ${o.dataDir}.`);
  }
  if (fs.existsSync(out) && !o.force) {
    throw new ApiError('conflict', `${out} already exists. Choose another name, or pass --force to replace it once the new archive is complete.`);
  }
  if (fs.existsSync(out) && !fs.statSync(out).isFile()) throw new ApiError('conflict', `${out} is not a file.`);
  const lock = acquireLock(o.dataDir, (previous) => o.log?.(`taking over a stale lock${previous ? ` left by process ${previous.pid}` : ''}`));
  try {
    const db = await openDatabase(o.dataDir);
    try {
      return await exportArchive({
        db,
        appVersion: o.appVersion,
        file: out,
        signal: o.signal,
        onProgress: o.onProgress,
        alone: true,
        attachmentsDir: attachmentsDir(o.dataDir),
        avatarDir: avatarDir(o.dataDir),
      });
    } finally {
      await db.close();
    }
  } finally {
    lock.release();
  }
}
