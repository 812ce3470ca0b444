// `.anima-vault.json`, kept in the synced folder: for each memory file Anima wrote there, where, the
// hash of the bytes written and the memory's editable fields at that moment. A file whose bytes
// still hash the same was not touched by the person; a memory whose fields still equal the recorded
// ones was not changed in Anima — that is how a sync tells the two apart.
import fs from 'node:fs';
import path from 'node:path';
import { ApiError } from '../../shared/api.js';
import type { EditableFields } from './format.js';

export const STATE_FILE = '.anima-vault.json';
const FORMAT = 'anima-vault-sync';
const VERSION = 1;

export interface FileRecord {
  /** Relative to the folder, with forward slashes. */
  path: string;
  hash: string;
  fields: EditableFields;
  /** The memory's creation time: an id from another data folder (or one erased since) does not match. */
  createdAt: string;
}

export interface VaultSyncState {
  format: typeof FORMAT;
  version: number;
  syncedAt: string;
  /** By memory id. */
  memories: Record<string, FileRecord>;
}

function isRecord(value: unknown): value is FileRecord {
  const r = value as FileRecord;
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r.path === 'string' &&
    typeof r.hash === 'string' &&
    typeof r.createdAt === 'string' &&
    typeof r.fields === 'object' &&
    r.fields !== null &&
    typeof r.fields.content === 'string' &&
    typeof r.fields.type === 'string' &&
    typeof r.fields.pinned === 'boolean'
  );
}

/** The state a folder holds; null when it has none (never synced). A damaged state file is refused in words. */
export function readState(dir: string): VaultSyncState | null {
  const file = path.join(dir, STATE_FILE);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new ApiError('invalid_input', `Anima cannot read ${file}: ${(err as Error).message}`);
  }
  let parsed: VaultSyncState;
  try {
    parsed = JSON.parse(text) as VaultSyncState;
  } catch {
    throw new ApiError(
      'invalid_input',
      `${file} is damaged (not JSON), so Anima cannot tell your edits from its own. Nothing was changed. Move that file away to sync this folder as a new one (your files there are then left alone, and Anima's are written beside them).`,
    );
  }
  if (parsed?.format !== FORMAT || typeof parsed.memories !== 'object' || parsed.memories === null) {
    throw new ApiError('invalid_input', `${file} is not an Anima vault state file. Nothing was changed.`);
  }
  if (parsed.version > VERSION) throw new ApiError('invalid_input', `${file} was written by a newer Anima. Nothing was changed.`);
  const memories: Record<string, FileRecord> = {};
  for (const [id, record] of Object.entries(parsed.memories)) if (/^\d+$/.test(id) && isRecord(record)) memories[id] = record;
  return { ...parsed, memories };
}

/** Written aside and renamed: a sync stopped part way leaves the state before it whole. */
export function writeState(dir: string, state: Omit<VaultSyncState, 'format' | 'version'>): void {
  writeFileAtomic(path.join(dir, STATE_FILE), `${JSON.stringify({ format: FORMAT, version: VERSION, ...state }, null, 1)}\n`);
}

export function writeFileAtomic(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  fs.writeFileSync(temp, text);
  fs.renameSync(temp, file);
}
