// Safety copies and restore: the copies there are (the nightly ones, those made by the person, the
// scheduled ones in a folder they chose, the state before each restore), making one now, the folder
// and its schedule, and restoring one — and the backups.* methods.
import { z } from 'zod';
import { empty } from './fields.js';

/** nightly: the sleep cycle's; manual: "Back up now"; scheduled: the chosen folder's schedule; before-restore: taken by a restore. */
export type BackupKind = 'nightly' | 'manual' | 'scheduled' | 'before-restore';
/** data: in the data folder; folder: in the folder the person chose; previous: a data folder a restore replaced, kept whole. */
export type BackupLocation = 'data' | 'folder' | 'previous';
export type BackupSchedule = 'off' | 'daily' | 'weekly';

export interface BackupCounts {
  conversations: number;
  /** Every stored message, earlier versions included. */
  messages: number;
  /** Active memories. */
  memories: number;
}

export interface BackupCopy {
  /** Opaque: what backups.restore takes. */
  id: string;
  where: BackupLocation;
  kind: BackupKind;
  /** The file (or folder) name. */
  name: string;
  createdAt: string;
  bytes: number;
  /** Nightly copies: the sleep day whose night wrote it, and the run. */
  sleepDay: string | null;
  runId: number | null;
  /** null when the copy has no manifest (written before manifests existed). */
  counts: BackupCounts | null;
  schemaVersion: number | null;
  /**
   * The pictures it holds besides the database (images attached in chat, the companion's pictures):
   * how many and their bytes; null: the database only (a copy made before copies held them — a
   * restore of it leaves the pictures as they are). `bytes` above counts each picture file once
   * across the list (they are hard links shared with the data folder and other copies).
   */
  images: { files: number; bytes: number } | null;
}

/** Where the copies into the person's own folder go, and how often. */
export interface BackupSettings {
  /** An absolute folder path (an external disk), or null: copies stay in the data folder only. */
  folder: string | null;
  schedule: BackupSchedule;
  /** Scheduled copies kept in the folder; older ones are removed after a new one is written. */
  keep: number;
}

export interface BackupsState {
  copies: BackupCopy[];
  settings: BackupSettings;
  /** The folder is set but cannot be written now (an unplugged disk): why, in words. */
  folderProblem: string | null;
  /** When the schedule writes its next copy (ISO 8601), null when off. */
  nextScheduledAt: string | null;
  lastScheduledAt: string | null;
  /** A copy or a restore under way. */
  running: BackupProgress | null;
}

export type BackupPhase = 'dumping' | 'writing' | 'unpacking' | 'verifying' | 'safety-copy' | 'switching' | 'done' | 'failed';

/** The backups.progress event: a copy being written or a restore under way. */
export interface BackupProgress {
  operation: 'backup' | 'restore';
  phase: BackupPhase;
  /** Steps done of total, for a progress bar. */
  done: number;
  total: number;
  /** When failed: what went wrong, in words. */
  error: string | null;
}

export interface RestoreResult {
  restored: BackupCopy;
  /** The copy of the state before the restore, in the data folder's copies. */
  safetyCopy: BackupCopy;
  /** The data folder the restore replaced, kept whole beside the new one. */
  previous: string;
  counts: BackupCounts;
}

export const BACKUP_KEEP = { min: 1, max: 100 } as const;

export const backupSettings = z.object({
  folder: z.string().trim().min(1).max(1000).nullable().default(null),
  schedule: z.enum(['off', 'daily', 'weekly']).default('off'),
  keep: z.number().int().min(BACKUP_KEEP.min).max(BACKUP_KEEP.max).default(10),
});

export const backupsInputs = {
  'backups.list': empty,
  /** data: into the data folder's copies; folder: into the chosen folder; both. */
  'backups.makeNow': z.object({ where: z.enum(['data', 'folder', 'both']).default('data') }).strict(),
  'backups.restore': z.object({ id: z.string().min(1).max(300) }).strict(),
  /** null: no folder (the schedule stops). The folder must exist and be writable. */
  'backups.setFolder': z.object({ folder: z.string().trim().min(1).max(1000).nullable() }).strict(),
  'backups.setSchedule': z
    .object({ schedule: z.enum(['off', 'daily', 'weekly']).optional(), keep: z.number().int().min(BACKUP_KEEP.min).max(BACKUP_KEEP.max).optional() })
    .strict(),
} as const;

export interface BackupsOutputs {
  'backups.list': BackupsState;
  'backups.makeNow': BackupCopy[];
  'backups.restore': RestoreResult;
  'backups.setFolder': BackupsState;
  'backups.setSchedule': BackupsState;
}
