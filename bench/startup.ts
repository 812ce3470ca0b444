// Host cold start on an existing data folder: open PGlite, migrate (nothing to do), take the lock,
// recover interrupted replies, and answer the first call the UI makes (the conversation list).
//   npm run bench:startup [-- --runs 7 --messages 2000]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createHost } from '../electron/host/index.js';
import { median, percentile, report, round } from './util.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '7' }, messages: { type: 'string', default: '2000' } } });
const runs = Number(values.runs);
const messageCount = Number(values.messages);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-bench-startup-'));
const quiet = { log: () => {}, detectLocalServers: false } as const;

// Prepare a lived-in data folder once (this part is not measured).
const setupStart = performance.now();
const seed = await createHost({ dataDir, ...quiet });
const conversation = await seed.api['conversations.create']({ title: 'A long conversation' });
// Bulk-insert history straight into the table: the benchmark is about opening, not writing.
const db = (await import('../electron/db/open.js')).openDatabase;
await seed.close();
{
  const raw = await db(dataDir);
  await raw.query(
    `INSERT INTO messages (id, conversation_id, role, content, status)
     SELECT gen_random_uuid()::text, $1, CASE WHEN i % 2 = 0 THEN 'user' ELSE 'assistant' END,
            'message ' || i || ' about the garden, the weather and the week ahead', 'complete'
     FROM generate_series(1, $2::int) AS i`,
    [conversation.id, messageCount],
  );
  await raw.close();
}
const initdbMs = performance.now() - setupStart;

const openMs: number[] = [];
const firstCallMs: number[] = [];
for (let i = 0; i < runs; i++) {
  const t0 = performance.now();
  const host = await createHost({ dataDir, ...quiet });
  const t1 = performance.now();
  const list = await host.api['conversations.list']({});
  await host.api['conversations.get']({ id: list[0]!.id });
  const t2 = performance.now();
  await host.close();
  openMs.push(t1 - t0);
  firstCallMs.push(t2 - t0);
}
fs.rmSync(dataDir, { recursive: true, force: true });

report('startup', {
  benchmark: 'host cold start on an existing data folder',
  runs,
  messages_in_folder: messageCount,
  cold_start_ms_median: round(median(openMs)),
  cold_start_ms_p95: round(percentile(openMs, 95)),
  cold_start_to_first_conversation_ms_median: round(median(firstCallMs)),
  first_run_setup_ms: round(initdbMs),
  node: process.version,
  cpus: os.cpus().length,
});
