// `anima vault sync`'s parts: whether a folder holds Anima's data, and a sync's report in words (the
// window has its own, translated).
import fs from 'node:fs';
import path from 'node:path';
import type { VaultChange, VaultSyncReport } from '../../shared/api/vault.js';
import { databaseDir } from '../db/open.js';

/** A data folder Anima has used: the command never makes a new companion in a mistyped folder. */
export function hasAnimaData(dataDir: string): boolean {
  return fs.existsSync(path.join(databaseDir(dataDir), 'PG_VERSION'));
}

const VERBS: Record<VaultChange['kind'], [now: string, preview: string]> = {
  created: ['stored as a new memory', 'would be stored as a new memory'],
  edited: ['edit taken', 'edit would be taken'],
  superseded: ['stored, replacing', 'would replace an older memory'],
  merged: ['saved into the same memory', 'would be saved into the same memory'],
  forgotten: ['deleted: memory forgotten', 'deleted: memory would be forgotten'],
  pinned: ['pinned', 'would be pinned'],
  unpinned: ['unpinned', 'would be unpinned'],
};

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

export function describeReport(r: VaultSyncReport): string[] {
  const out: string[] = [];
  out.push(r.dryRun ? `Preview of a sync with ${r.dir} — nothing was changed:` : `Synced ${r.dir}${r.firstSync ? ' (the first time)' : ''}:`);
  for (const c of r.changes) {
    const verb = VERBS[c.kind][r.dryRun ? 1 : 0];
    const which = c.memoryId === null ? '' : ` memory ${c.memoryId}${c.kind === 'superseded' && c.otherId ? ` (replaces ${c.otherId})` : ''}`;
    const undo = c.changeId === null ? '' : ` [undo: change ${c.changeId}]`;
    out.push(`  ${c.file}: ${verb}${which} — “${c.text}”${undo}`);
  }
  for (const p of r.conflicts) out.push(`  conflict  ${p.file}: ${p.message}`);
  for (const p of r.ignored) out.push(`  left alone  ${p.file}: ${p.message}`);
  const files = `${plural(r.written.length, 'file', 'files')} ${r.dryRun ? 'would be written' : 'written'}, ${plural(r.removed.length, 'file', 'files')} ${r.dryRun ? 'would be removed' : 'removed'}, ${r.unchanged} already in step`;
  out.push(`${r.changes.length ? '' : 'No change to memory from the folder. '}${files}.`);
  if (r.conflicts.length) out.push(`${plural(r.conflicts.length, 'conflict was', 'conflicts were')} left as they are: see above.`);
  if (!r.dryRun && r.changes.some((c) => c.changeId !== null)) out.push('Each change can be undone in Memories (its history), like any edit.');
  return out;
}
