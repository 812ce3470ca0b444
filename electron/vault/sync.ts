// One sync of a vault folder with memory, in two halves:
//
//   1. read the person's files back: an edited file → MemoryStore.update (an edit, or a supersede by
//      the store's own same-slot rule) and .pin; a new file (no id) → MemoryStore.create (the secret
//      filter, the type, the owner and the same-fact rule, as for every save); a deleted file →
//      MemoryStore.forget (expired, undoable). Every change is the person's, journalled, undoable.
//   2. write the folder to match memory: a file per active memory in the export's format
//      (archive/vault.ts), memories gone from Anima lose their files — only files as Anima wrote them.
//
// The state file (state.ts) tells "edited here" from "changed in Anima": when both changed, the
// person's edit is not taken and nothing of that memory is touched (a conflict, reported). Files
// Anima did not write, with broken frontmatter, an unknown type or impossible dates are reported and
// left alone. A dry run makes the same plan and writes nothing, to the database or the folder.
import fs from 'node:fs';
import path from 'node:path';
import { ApiError, MEMORY_TYPES, type MemoryType, type SaveMemoryResult } from '../../shared/api.js';
import type { VaultChange, VaultProblem, VaultSyncReport } from '../../shared/api/vault.js';
import { vaultMemories } from '../archive/reads.js';
import { memoryFile, memoryPath, type VaultMemory } from '../archive/vault.js';
import type { Database } from '../db/open.js';
import type { MemoryStore } from '../memory/store.js';
import { checkWrite } from '../memory/write-checks.js';
import { BrokenFile, differing, line, normalizeDate, parseMemoryFile, rowFields, sameFields, sha256, type EditableFields } from './format.js';
import { readState, writeFileAtomic, writeState, type FileRecord } from './state.js';

/** A file bigger than this is no memory (a memory holds at most 4,000 characters). */
const MAX_FILE_BYTES = 256 * 1024;
/** A folder with more files than this is not a vault folder. */
const MAX_FILES = 50_000;
/** Missing files from this many on, and more than half of those recorded, are not taken as deletions. */
const MASS_DELETE = 10;
const REASON_EDIT = 'edited in the vault folder';
const REASON_NEW = 'written in the vault folder';
const REASON_DELETE = 'its file was deleted from the vault folder';

export interface SyncOptions {
  db: Database;
  memories: MemoryStore;
  dir: string;
  dryRun?: boolean;
  /** The data folder: a vault inside it is refused. */
  dataDir?: string;
  now?: () => Date;
}

interface FoundFile {
  rel: string;
  abs: string;
  bytes: Buffer;
}

/** Where a memory's file goes when it has none yet: the export's path without its `vault/`. */
export function defaultPath(m: Pick<VaultMemory, 'id' | 'type' | 'content'>): string {
  return memoryPath(m).replace(/^vault\//, '');
}

/** Checks the folder: absolute, not a file, not inside the data folder. */
export function checkFolder(dir: string, dataDir?: string): string {
  if (!path.isAbsolute(dir)) throw new ApiError('invalid_input', `The vault folder must be a full path (like /home/you/Notes/Anima), not “${dir}”.`, 'dir');
  const resolved = path.resolve(dir);
  if (fs.existsSync(resolved) && !fs.statSync(resolved).isDirectory()) throw new ApiError('invalid_input', `${resolved} is a file, not a folder.`, 'dir');
  if (dataDir) {
    const data = path.resolve(dataDir);
    if (resolved === data || resolved.startsWith(data + path.sep)) {
      throw new ApiError('invalid_input', `The vault folder cannot be inside Anima's data folder (${data}); choose a folder of your own.`, 'dir');
    }
  }
  return resolved;
}

/** Where memory files are: memories/<type>/<name>.md. */
const MEMORY_FILE = /^memories\/([^/]+)\/[^/]+\.md$/i;
/** Files other than memory files named one by one in a report; the rest are counted. */
const MAX_NAMED_FOREIGN = 100;

/** The memory files of the folder, read; every other file is reported as not Anima's (and never read). */
function scan(dir: string, ignored: VaultProblem[], keep: Set<string>): FoundFile[] {
  const found: FoundFile[] = [];
  let foreign = 0;
  let seen = 0;
  if (!fs.existsSync(dir)) return found;
  const other = (rel: string, message: string) => {
    keep.add(rel);
    if (++foreign <= MAX_NAMED_FOREIGN) ignored.push({ reason: 'foreign', file: rel, memoryId: null, message });
  };
  const walk = (abs: string, rel: string) => {
    for (const entry of fs.readdirSync(abs, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      // Dot files and folders are the state file, temporary files and other tools' (.git, .obsidian).
      if (entry.name.startsWith('.')) continue;
      const childRel = rel ? `${rel}/${entry.name}` : entry.name;
      const childAbs = path.join(abs, entry.name);
      if (entry.isDirectory()) {
        walk(childAbs, childRel);
        continue;
      }
      if (++seen > MAX_FILES)
        throw new ApiError('invalid_input', `${dir} holds more than ${MAX_FILES} files; choose a folder for Anima's memories alone.`, 'dir');
      if (!entry.isFile()) {
        other(childRel, 'Not a plain file (a link or a device); left alone.');
        continue;
      }
      if (!MEMORY_FILE.test(childRel)) {
        other(childRel, 'Not a memory file (Anima reads memories/<type>/*.md); left alone.');
        continue;
      }
      const size = fs.statSync(childAbs).size;
      if (size > MAX_FILE_BYTES) {
        keep.add(childRel);
        ignored.push({
          reason: 'too-large',
          file: childRel,
          memoryId: null,
          message: `${Math.round(size / 1024)} KB is too big for a memory file; left alone.`,
        });
        continue;
      }
      found.push({ rel: childRel, abs: childAbs, bytes: fs.readFileSync(childAbs) });
    }
  };
  walk(dir, '');
  if (foreign > MAX_NAMED_FOREIGN) {
    ignored.push({ reason: 'foreign', file: '…', memoryId: null, message: `${foreign - MAX_NAMED_FOREIGN} more files that are not memory files; left alone.` });
  }
  return found;
}

async function allMemories(db: Database): Promise<Map<number, VaultMemory>> {
  const rows = new Map<number, VaultMemory>();
  for (let after = 0; ;) {
    const page = await vaultMemories(db, after, 5000);
    for (const m of page) rows.set(m.id, m);
    if (page.length < 5000) break;
    after = page[page.length - 1]!.id;
  }
  return rows;
}

const isType = (t: unknown): t is MemoryType => typeof t === 'string' && (MEMORY_TYPES as readonly string[]).includes(t);

type Plan =
  | { kind: 'edit'; file: FoundFile; id: number; from: EditableFields; to: EditableFields }
  | { kind: 'create'; file: FoundFile; to: EditableFields }
  | { kind: 'forget'; id: number; record: FileRecord };

export async function syncVault(o: SyncOptions): Promise<VaultSyncReport> {
  const dryRun = o.dryRun ?? false;
  const dir = checkFolder(o.dir, o.dataDir);
  if (!fs.existsSync(dir) && !fs.existsSync(path.dirname(dir))) {
    // An unplugged disk: never make its mount point's folders on the disk Anima runs from.
    throw new ApiError('not_found', `${path.dirname(dir)} does not exist (a disk that is not connected?). Nothing was changed.`, 'dir');
  }
  const now = o.now ?? (() => new Date());
  const state = readState(dir);
  const records = state?.memories ?? {};
  const changes: VaultChange[] = [];
  const conflicts: VaultProblem[] = [];
  const ignored: VaultProblem[] = [];
  const written: string[] = [];
  const removed: string[] = [];

  /** Files never to be written over or removed: the person's, not (yet) taken in. */
  const keep = new Set<string>();
  const files = scan(dir, ignored, keep);
  let rows = await allMemories(o.db);
  /** Memories whose file and record stay exactly as they are (a conflict, a broken or refused edit). */
  const held = new Set<number>();
  /** Where each memory's file is now (the person may have moved it). */
  const location = new Map<number, FoundFile>();
  /** Files whose text is now in memory: rewritten or removed freely. */
  const absorbed = new Set<string>();
  const recordByPath = new Map(Object.entries(records).map(([id, r]) => [r.path, Number(id)]));
  const plans: Plan[] = [];
  const leave = (file: string, reason: VaultProblem['reason'], message: string, memoryId: number | null = null) => {
    keep.add(file);
    if (memoryId !== null) held.add(memoryId);
    (reason === 'conflict' ? conflicts : ignored).push({ reason, file, memoryId, message });
  };
  const sameMemory = (id: number, record: FileRecord) => rows.get(id)?.created_at === record.createdAt;

  // --- 1. what the files say --------------------------------------------------------------------
  // Files where Anima wrote them first: of two files claiming one memory, the one at its place is it.
  files.sort((a, b) => Number(recordByPath.has(b.rel)) - Number(recordByPath.has(a.rel)));
  for (const file of files) {
    const folderType = MEMORY_FILE.exec(file.rel)![1]!;
    const pathId = recordByPath.get(file.rel) ?? null;
    let parsed;
    try {
      parsed = parseMemoryFile(file.bytes.toString('utf8'));
      if (parsed.frontmatter === null && pathId !== null) throw new BrokenFile('its frontmatter (the lines between ---) is gone');
    } catch (err) {
      if (!(err instanceof BrokenFile)) throw err;
      leave(file.rel, 'broken', `The frontmatter cannot be read: ${err.message}. Left alone; fix it and sync again.`, pathId);
      continue;
    }
    const fm = parsed.frontmatter ?? new Map<string, unknown>();
    const rawId = fm.get('id') ?? null;
    if (rawId !== null && (typeof rawId !== 'number' || !Number.isInteger(rawId) || rawId <= 0)) {
      leave(file.rel, 'broken', `"id: ${String(rawId)}" is not a memory id. Left alone; remove the id line to make it a new memory.`, pathId);
      continue;
    }
    const dates = { validFrom: normalizeDate(fm.get('valid_from')), validTo: normalizeDate(fm.get('valid_to')) };
    const pinned = fm.get('pinned');

    if (rawId === null) {
      // A new memory, in the person's words.
      const type = fm.get('type') ?? folderType;
      if (!isType(type)) {
        leave(file.rel, 'unknown-type', `“${String(type)}” is not a memory type (${MEMORY_TYPES.join(', ')}). Left alone.`);
        continue;
      }
      if (dates.validFrom === undefined || dates.validTo === undefined || (dates.validFrom && dates.validTo && dates.validTo < dates.validFrom)) {
        leave(file.rel, 'bad-date', 'valid_from or valid_to is not a real date (YYYY-MM-DD), or ends before it starts. Left alone.');
        continue;
      }
      plans.push({ kind: 'create', file, to: { type, content: parsed.body, validFrom: dates.validFrom, validTo: dates.validTo, pinned: pinned === true } });
      continue;
    }

    const id = rawId as number;
    const record = records[String(id)];
    if (!record) {
      leave(file.rel, 'foreign', `Memory ${id} was not written into this folder by this Anima (a copy from elsewhere?). Left alone.`);
      continue;
    }
    const seen = location.get(id);
    if (seen) {
      // Two files claim one memory: the first (at its recorded place, if either is) is it, the other a copy.
      leave(file.rel, 'duplicate-id', `${seen.rel} is already memory ${id}; this copy is left alone (remove its id line to make it a new memory).`);
      continue;
    }
    location.set(id, file);
    if (!sameMemory(id, record)) {
      leave(file.rel, 'foreign', `Memory ${id} in this file is not in this Anima (the folder was synced with other data, or it was erased since). Left alone.`);
      continue;
    }
    if (sha256(file.bytes) === record.hash) continue; // as Anima wrote it
    const type = fm.has('type') ? fm.get('type') : record.fields.type;
    if (!isType(type)) {
      leave(file.rel, 'unknown-type', `“${String(type)}” is not a memory type (${MEMORY_TYPES.join(', ')}). Left alone.`, id);
      continue;
    }
    const to: EditableFields = {
      type,
      content: parsed.body,
      validFrom: fm.has('valid_from') ? dates.validFrom! : record.fields.validFrom,
      validTo: fm.has('valid_to') ? dates.validTo! : record.fields.validTo,
      pinned: typeof pinned === 'boolean' ? pinned : record.fields.pinned,
    };
    if (to.validFrom === undefined || to.validTo === undefined || (to.validFrom && to.validTo && to.validTo < to.validFrom)) {
      leave(file.rel, 'bad-date', 'valid_from or valid_to is not a real date (YYYY-MM-DD), or ends before it starts. Left alone.', id);
      continue;
    }
    const row = rows.get(id)!;
    const current = rowFields(row);
    if (row.status === 'active' && sameFields(to, current)) {
      absorbed.add(file.rel); // already says what memory holds
      continue;
    }
    if (sameFields(to, record.fields)) continue; // only what Anima keeps up to date (counts, times) was touched
    if (row.status !== 'active') {
      leave(
        file.rel,
        'conflict',
        `Memory ${id} was ${row.status === 'expired' ? 'forgotten' : 'replaced'} in Anima since the last sync, and this file was edited: your edit is left in the file, not taken. Remove its id line to save it as a new memory, or delete the file.`,
        id,
      );
      continue;
    }
    if (!sameFields(current, record.fields)) {
      leave(
        file.rel,
        'conflict',
        `Memory ${id} was changed in Anima since the last sync, and so was this file: both are left as they are. Now Anima says: “${line(row.content)}”. Delete the file to take Anima's version (it is written again), or make the memory in Anima say what you want, and sync again.`,
        id,
      );
      continue;
    }
    plans.push({ kind: 'edit', file, id, from: record.fields, to });
  }

  // Files gone since the last sync: a forget, unless Anima changed the memory meanwhile.
  for (const [key, record] of Object.entries(records)) {
    const id = Number(key);
    if (location.has(id) || keep.has(record.path)) continue;
    const row = rows.get(id);
    if (!row || !sameMemory(id, record) || row.status !== 'active') continue;
    if (!sameFields(rowFields(row), record.fields)) {
      conflicts.push({
        reason: 'conflict',
        file: record.path,
        memoryId: id,
        message: `This file was deleted, but memory ${id} was changed in Anima since the last sync, so it was not forgotten; its file is written again. Delete it again to forget it.`,
      });
      continue;
    }
    plans.push({ kind: 'forget', id, record });
  }
  // Most of the folder gone at once is an emptied or half-copied folder far more often than that many
  // deliberate deletions: nothing is forgotten, the files are written again, and the person is told.
  const forgets = plans.filter((p) => p.kind === 'forget');
  const recorded = Object.keys(records).length;
  if (forgets.length >= MASS_DELETE && forgets.length * 2 > recorded) {
    for (const p of forgets) {
      conflicts.push({
        reason: 'emptied',
        file: p.record.path,
        memoryId: p.id,
        message: `${forgets.length} of the ${recorded} memory files are gone at once, which looks like an emptied folder rather than that many deletions: nothing was forgotten and the files are written again. To forget this many memories, forget them in Memories.`,
      });
    }
    plans.splice(0, plans.length, ...plans.filter((p) => p.kind !== 'forget'));
  }

  // --- 2. the changes, each through the memory store ---------------------------------------------
  /** A memory's file goes where the person put it (a new file, an edited one). */
  const pathFor = new Map<number, string>();
  /** A preview's forgets: their files are not written back. */
  const forgetting = new Set<number>();
  const refused = (file: string, err: unknown, memoryId: number | null) => {
    if (!(err instanceof ApiError)) throw err;
    if (err.code === 'conflict' || err.code === 'not_found') {
      leave(file, 'conflict', `${err.message} The file is left as it is.`, memoryId);
    } else {
      leave(file, 'refused', `Not taken: ${err.message}`, memoryId);
    }
  };
  const saved = (kind: VaultChange['kind'], file: string, r: SaveMemoryResult, otherId?: number) =>
    changes.push({ kind, file, memoryId: r.memory.id, text: line(r.memory.content), changeId: r.changeId, ...(otherId ? { otherId } : {}) });

  /** The memory as it is now, just before a change: Anima may have changed it since the folder was read. */
  const changedMeanwhile = async (id: number, record: EditableFields): Promise<boolean> => {
    const [now] = await o.memories.getMany([id]);
    if (!now || now.status !== 'active') return true;
    const live = {
      type: now.type,
      content: now.content.trim(),
      validFrom: normalizeDate(now.validFrom) ?? null,
      validTo: normalizeDate(now.validTo) ?? null,
      pinned: now.pinned,
    };
    return !sameFields(live, record);
  };
  const meanwhile = (file: string, id: number) =>
    leave(file, 'conflict', `Memory ${id} was changed in Anima while the folder was being synced; this file is left as it is. Sync again.`, id);

  for (const plan of plans) {
    if (!dryRun && plan.kind !== 'create' && (await changedMeanwhile(plan.id, plan.kind === 'edit' ? plan.from : plan.record.fields))) {
      meanwhile(plan.kind === 'edit' ? plan.file.rel : plan.record.path, plan.id);
      continue;
    }
    if (plan.kind === 'forget') {
      if (dryRun) {
        forgetting.add(plan.id);
        changes.push({ kind: 'forgotten', file: plan.record.path, memoryId: plan.id, text: line(rows.get(plan.id)!.content), changeId: null });
        continue;
      }
      try {
        saved('forgotten', plan.record.path, await o.memories.forget(plan.id, 'person', REASON_DELETE));
      } catch (err) {
        refused(plan.record.path, err, plan.id);
      }
      continue;
    }
    const { file, to } = plan;
    const write = {
      type: to.type as MemoryType,
      content: to.content,
      validFrom: to.validFrom,
      validTo: to.validTo,
      source: 'user' as const,
      actor: 'person' as const,
    };
    if (dryRun) {
      // The same guards the store runs first (a secret, the type, the owner, the dates); the database is not asked.
      try {
        checkWrite(write);
      } catch (err) {
        refused(file.rel, err, plan.kind === 'edit' ? plan.id : null);
        continue;
      }
      if (plan.kind === 'create') changes.push({ kind: 'created', file: file.rel, memoryId: null, text: line(to.content), changeId: null });
      else {
        absorbed.add(file.rel);
        const fields = differing(plan.from, plan.to);
        if (fields.some((f) => f !== 'pinned')) changes.push({ kind: 'edited', file: file.rel, memoryId: plan.id, text: line(to.content), changeId: null });
        if (fields.includes('pinned'))
          changes.push({ kind: to.pinned ? 'pinned' : 'unpinned', file: file.rel, memoryId: plan.id, text: line(to.content), changeId: null });
      }
      continue;
    }
    if (plan.kind === 'create') {
      try {
        const r = await o.memories.create({ ...write, pinned: to.pinned || undefined, reason: REASON_NEW });
        absorbed.add(file.rel);
        if (r.outcome === 'updated') saved('merged', file.rel, r, r.memory.id);
        else saved(r.superseded ? 'superseded' : 'created', file.rel, r, r.superseded);
        if (!(r.outcome === 'updated' && records[String(r.memory.id)])) pathFor.set(r.memory.id, file.rel);
      } catch (err) {
        refused(file.rel, err, null);
      }
      continue;
    }
    // An edit: the text, type and valid time through update (which supersedes for a new value of the same slot), then the pin.
    try {
      let id = plan.id;
      const patch: { type?: MemoryType; content?: string; validFrom?: string | null; validTo?: string | null } = {};
      for (const f of differing(plan.from, to)) if (f !== 'pinned') Object.assign(patch, { [f]: to[f] });
      if (Object.keys(patch).length) {
        const r = await o.memories.update(id, patch, 'person', REASON_EDIT);
        saved(r.superseded ? 'superseded' : 'edited', file.rel, r, r.superseded);
        id = r.memory.id;
      }
      if (to.pinned !== plan.from.pinned && (await o.memories.get(id)).memory.pinned !== to.pinned) {
        saved(to.pinned ? 'pinned' : 'unpinned', file.rel, await o.memories.pin(id, to.pinned, 'person'));
      }
      absorbed.add(file.rel);
      pathFor.set(id, file.rel);
    } catch (err) {
      refused(file.rel, err, plan.id);
    }
  }

  // --- 3. the folder, written to match memory -----------------------------------------------------
  if (!dryRun) {
    rows = await allMemories(o.db);
    if (!fs.existsSync(dir)) fs.mkdirSync(dir);
  }
  const present = new Map(files.map((f) => [f.rel, f]));
  const memories: Record<string, FileRecord> = {};
  const used = new Set<string>();
  let unchanged = 0;
  // Held memories keep their files and records untouched: the next sync sees the same situation.
  for (const id of held) {
    const record = records[String(id)];
    if (record && rows.get(id)?.created_at === record.createdAt) {
      memories[String(id)] = record;
      used.add(location.get(id)?.rel ?? record.path);
    }
  }
  const ours = (rel: string, id?: number) => {
    const f = present.get(rel);
    if (!f) return true;
    if (keep.has(rel)) return false;
    if (absorbed.has(rel)) return true;
    const owner = recordByPath.get(rel);
    const byId = id !== undefined ? records[String(id)] : undefined;
    if (byId && location.get(id!)?.rel === rel) return true;
    return owner !== undefined && sha256(f.bytes) === records[String(owner)]!.hash;
  };
  for (const row of [...rows.values()].sort((a, b) => a.id - b.id)) {
    if (row.status !== 'active' || memories[String(row.id)] || forgetting.has(row.id)) continue;
    const record = records[String(row.id)];
    const known = record && record.createdAt === row.created_at ? record : undefined;
    const candidates = [pathFor.get(row.id), known ? (location.get(row.id)?.rel ?? known.path) : undefined, defaultPath(row)].filter(
      (p): p is string => p !== undefined,
    );
    const target = candidates.find((p) => !used.has(p) && ours(p, row.id));
    if (!target) {
      ignored.push({
        reason: 'occupied',
        file: candidates[candidates.length - 1]!,
        memoryId: row.id,
        message: `A file Anima did not write is where memory ${row.id} goes; it is left alone and that memory has no file here.`,
      });
      continue;
    }
    used.add(target);
    const text = memoryFile(row);
    const existing = present.get(target);
    if (existing && existing.bytes.equals(Buffer.from(text))) unchanged++;
    else {
      written.push(target);
      if (!dryRun) writeFileAtomic(path.join(dir, target), text);
    }
    memories[String(row.id)] = { path: target, hash: sha256(text), fields: rowFields(row), createdAt: row.created_at };
  }
  // Files of memories no longer held, and new files saved into a memory that already had one.
  for (const f of files) {
    if (used.has(f.rel) || keep.has(f.rel)) continue;
    const owner = recordByPath.get(f.rel);
    const asWritten = owner !== undefined && sha256(f.bytes) === records[String(owner)]!.hash && !memories[String(owner)];
    const fileId = [...location.entries()].find(([, l]) => l.rel === f.rel)?.[0];
    const gone = fileId !== undefined && rows.get(fileId)?.status !== 'active' && ours(f.rel, fileId) && sameMemory(fileId, records[String(fileId)]!);
    if (absorbed.has(f.rel) || asWritten || gone) {
      removed.push(f.rel);
      if (!dryRun) fs.rmSync(f.abs, { force: true });
    }
  }

  if (!dryRun) {
    writeState(dir, { syncedAt: now().toISOString(), memories });
  }
  return { dir, dryRun, at: now().toISOString(), firstSync: state === null, changes, conflicts, ignored, written, removed, unchanged };
}
