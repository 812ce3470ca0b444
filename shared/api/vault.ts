// The vault folder both ways: a folder of markdown memory files (the export's format) that Anima
// writes and reads back — an edited file is an edit, a new file a memory, a deleted file a forget —
// with a preview that changes nothing, and the vault.* methods.
import { z } from 'zod';
import { empty } from './fields.js';

/** The folder Settings → Data keeps in step, and whether it does. */
export interface VaultSettings {
  /** An absolute folder path, or null: none chosen. */
  folder: string | null;
  /** Sync when Anima starts and after each night's sleep. */
  keepInStep: boolean;
}

export const vaultSettings = z.object({
  folder: z.string().min(1).max(1000).nullable().default(null),
  keepInStep: z.boolean().default(false),
});

/** What the person's files did to memory (or, in a preview, would do). */
export type VaultChangeKind = 'created' | 'edited' | 'superseded' | 'merged' | 'forgotten' | 'pinned' | 'unpinned';

export interface VaultChange {
  kind: VaultChangeKind;
  /** The file, relative to the folder. */
  file: string;
  /** The memory it changed; null for a new file in a preview (its id is given when it is stored). */
  memoryId: number | null;
  /** The memory's text after the change (a line of it). */
  text: string;
  /** The journal entry undo takes back (memories.undo); null in a preview. */
  changeId: number | null;
  /** superseded: the memory the new one replaced; merged: the one it was saved into. */
  otherId?: number;
}

/**
 * A file left alone: written by someone else (foreign), unreadable frontmatter (broken), a type
 * Anima does not know, a date that does not exist, refused by a guard (a secret, an opinion without
 * its owner), changed both here and in Anima since the last sync (conflict), or gone with most of the
 * folder at once (emptied: not taken as deletions).
 */
export type VaultProblemReason =
  'foreign' | 'broken' | 'unknown-type' | 'bad-date' | 'refused' | 'conflict' | 'duplicate-id' | 'occupied' | 'too-large' | 'emptied';

export interface VaultProblem {
  reason: VaultProblemReason;
  file: string;
  memoryId: number | null;
  /** What is wrong and what to do, in words. */
  message: string;
}

export interface VaultSyncReport {
  dir: string;
  dryRun: boolean;
  at: string;
  /** No state file was there: the folder had not been synced with this Anima before. */
  firstSync: boolean;
  changes: VaultChange[];
  conflicts: VaultProblem[];
  ignored: VaultProblem[];
  /** Files written (or, in a preview, that would be) so the folder says what Anima holds. */
  written: string[];
  /** Files of memories no longer held (forgotten or replaced in Anima) removed — only ones as Anima wrote them. */
  removed: string[];
  /** Memory files already in step. */
  unchanged: number;
}

export interface VaultState {
  settings: VaultSettings;
  /** The last sync of this session (a preview included), or null. */
  last: VaultSyncReport | null;
  /** A sync is under way. */
  running: boolean;
  /** The last automatic sync failed: why, in words. */
  problem: string | null;
}

const folderPath = z.string().trim().min(1).max(1000);

export const vaultInputs = {
  'vault.status': empty,
  /** Choose the folder (null: none) and whether it is kept in step; the folder is checked, nothing is synced. */
  'vault.configure': z.object({ folder: folderPath.nullable(), keepInStep: z.boolean() }).strict(),
  /** Sync a folder (default: the chosen one); dryRun lists what would change and changes nothing. */
  'vault.sync': z.object({ dir: folderPath.optional(), dryRun: z.boolean().optional() }).strict(),
} as const;

export interface VaultOutputs {
  'vault.status': VaultState;
  'vault.configure': VaultState;
  'vault.sync': VaultSyncReport;
}
