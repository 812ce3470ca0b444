// Export: one zip of everything a person would want back (the JSON, a markdown vault, a SQL dump),
// with its progress and a cancel. One export runs at a time.
import type { ApiErrorShape } from './errors.js';
import { empty } from './fields.js';

export type ArchiveExportState = 'running' | 'done' | 'failed' | 'cancelled';

/** Where an export stands (the `archive.progress` event and archive.exportStatus). */
export interface ArchiveExportStatus {
  id: string;
  state: ArchiveExportState;
  /** data: anima.json; vault: the markdown files; sql: the database dump; finishing: checking and naming the file. */
  phase: 'data' | 'vault' | 'sql' | 'finishing';
  /** 0–1. */
  fraction: number;
  /** The archive's file name, and where it is (the data folder's exports/). */
  fileName: string;
  path: string;
  /** The file's size once done. */
  bytes: number | null;
  /** What it holds once done: rows per section. */
  counts: Record<string, number> | null;
  startedAt: string;
  finishedAt: string | null;
  error: ApiErrorShape | null;
}

export const archiveInputs = {
  /** Start an export into the data folder's exports/ (a new file each time); returns at once. Progress arrives as archive.progress. */
  'archive.export': empty,
  /** Stop the running export: nothing is left behind under the archive's name. */
  'archive.cancel': empty,
  /** The running or last export of this session (null: none yet). */
  'archive.exportStatus': empty,
} as const;

export interface ArchiveOutputs {
  'archive.export': ArchiveExportStatus;
  'archive.cancel': ArchiveExportStatus | null;
  'archive.exportStatus': ArchiveExportStatus | null;
}
