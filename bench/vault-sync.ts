// The vault folder's sync at a size: the first sync writing every file, a sync with nothing to do,
// a preview and a sync of ten edited files.
//   node --import tsx --import ./scripts/register-sql.mjs bench/vault-sync.ts [--memories 1000]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../electron/db/open.js';
import { MemoryStore } from '../electron/memory/store.js';
import { syncVault } from '../electron/vault/sync.js';

const { values } = parseArgs({ options: { memories: { type: 'string', default: '1000' } } });
const count = Number(values.memories);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-bench-vault-'));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-bench-vault-folder-'));
const db = await openDatabase(dataDir);
const store = new MemoryStore(db);
const places = ['Brno', 'Lisbon', 'Oslo', 'Kyoto', 'Quito', 'Accra', 'Perth', 'Lyon'];
// Through the store, as every memory is written (not measured).
for (let i = 0; i < count; i++) {
  await store.create({ type: 'world', content: `Mara's friend number ${i} lives in ${places[i % 8]} and owns ${i} books.`, source: 'user', actor: 'person' });
}

const ms: Record<string, number> = {};
const time = async <T>(name: string, run: () => Promise<T>): Promise<T> => {
  const t = performance.now();
  const result = await run();
  ms[name] = Math.round(performance.now() - t);
  return result;
};
await time('first_sync_ms', () => syncVault({ db, memories: store, dir }));
const idle = await time('nothing_to_do_ms', () => syncVault({ db, memories: store, dir }));
const world = path.join(dir, 'memories', 'world');
for (const name of fs.readdirSync(world).slice(0, 10)) {
  const file = path.join(world, name);
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('books.', 'books and a bike.'));
}
await time('preview_10_edits_ms', () => syncVault({ db, memories: store, dir, dryRun: true }));
const edited = await time('sync_10_edits_ms', () => syncVault({ db, memories: store, dir }));
console.log(JSON.stringify({ memories: count, ...ms, idle_written: idle.written.length, edits_taken: edited.changes.length }, null, 2));
await db.close();
fs.rmSync(dataDir, { recursive: true, force: true });
fs.rmSync(dir, { recursive: true, force: true });
