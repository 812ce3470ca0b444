// The entity graph's long-history build alone: a copy of a data folder kept by bench:locomo with the
// turns loaded and no graph (`npm run bench:locomo -- --data DIR --keep FOLDER --skip-graph
// --graph-walk off`), then the GraphIndexer's backfill over it, as the app runs it at start and as
// bench:locomo runs it after its load. Prints the process's CPU time per turn (what a shared, loaded
// machine inflates least), the wall time and the graph's size. The kept folder is never changed.
//
//   node --import tsx --import ./scripts/register-sql.mjs bench/graph-load.ts FOLDER
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../electron/db/open.js';
import { GraphIndexer } from '../electron/graph/indexer.js';
import { EntityStore } from '../electron/graph/store.js';
import { Conversations } from '../electron/conversations/conversations.js';
import { MemoryStore } from '../electron/memory/store.js';

const kept = process.argv[2];
if (!kept || !fs.existsSync(path.join(kept, 'db', 'PG_VERSION'))) {
  console.error('usage: bench/graph-load.ts FOLDER (a folder kept by bench:locomo --keep FOLDER --skip-graph)');
  process.exit(2);
}
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-bench-graph-load-'));
try {
  fs.cpSync(kept, dir, { recursive: true });
  const db = await openDatabase(dir);
  try {
    const conversations = new Conversations(db);
    const count = async (sql: string) => (await db.query<{ n: number }>(sql)).rows[0]!.n;
    const turns = await count('SELECT count(*)::int AS n FROM messages');
    const start = performance.now();
    const cpuStart = process.cpuUsage();
    const indexer = new GraphIndexer(db, new EntityStore(db, { conversations, memories: new MemoryStore(db) }), (level, message) => {
      if (level !== 'info') console.warn(message);
    });
    await indexer.backfill();
    await indexer.close();
    const used = process.cpuUsage(cpuStart);
    const wall = performance.now() - start;
    const cpu = (used.user + used.system) / 1000;
    console.log(
      JSON.stringify({
        turns,
        graph_s: Math.round(wall / 100) / 10,
        graph_cpu_s: Math.round(cpu / 100) / 10,
        graph_cpu_ms_per_turn: Math.round((cpu / Math.max(1, turns)) * 1000) / 1000,
        entities: await count(`SELECT count(*)::int AS n FROM entities WHERE status = 'active'`),
        edges: await count('SELECT count(*)::int AS n FROM entity_edges'),
        mentions: await count('SELECT count(*)::int AS n FROM entity_mentions'),
        load_average: Math.round(os.loadavg()[0]! * 10) / 10,
      }),
    );
  } finally {
    await db.close();
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
