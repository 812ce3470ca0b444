// Recall at scale: a lived-in data folder (default 100k messages, 20k memories, 3k diary blocks of
// real conversational text), queried with distinct real questions, no result cache.
//   npm run bench:recall -- [--messages 100000] [--memories 20000] [--diary 3000] [--queries 500] [--json FILE] [--explain]
//                           [--database postgres://user@host:5432/postgres] [--keep DIR]
//
// --keep DIR builds the folder in DIR (new or empty) and leaves it there afterwards, for EXPLAIN or a
// profile of single statements on it (PGlite only).
//
// With --database the same work runs a second time on that PostgreSQL server, in a database of its
// own the bench creates there (anima_bench_…) and drops afterwards — the URL only says where to
// connect, nothing in its database is touched — and both engines are reported side by side from one
// run: PGlite's keys as they were, the server's under `postgres` (after its bulk load the server's
// tables are ANALYZEd, as its autovacuum would; PGlite has none).
//
// The text: the turns of the LoCoMo dev conversations (--data, default ../shared/bench/locomo/dev —
// turns and photo captions only, never the dataset's annotations), scaled up with variation: the
// speakers' names swapped for others from a pool, a second turn sometimes joined on, and about one
// word in ten of four letters or more swapped for another word of the same corpus. The questions:
// the dev questions, distinct, in a fixed shuffled order.
//
// Measured:
// - memory_recall (all four sources) through the host's API, `recall.search` (validation included),
//   on a host opened on the folder;
// - passive recall (semantic, the default settings, 20 resident memories excluded, no timeout) and
//   semantic search (memory_semantic_search's query), called on the database directly — they have
//   no API method;
// - write throughput of the app's write paths at full size: the last messages go through
//   Conversations.append and the last memories through MemoryStore.create (the rest is bulk-loaded
//   with the same columns, which would take ~3 minutes through the write path);
// - the database's size on disk after a restart through the app's own open and close (`db_mb`) beside
//   what its tables and indexes take (`tables_mb`, pg_total_relation_size), and how long the in-memory
//   index takes to build.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { MEMORY_TYPES, type MemoryType } from '../shared/api.js';
import { openDatabase, type Database } from '../electron/db/open.js';
import { checkDatabaseUrl, redactDatabaseUrl } from '../electron/db/postgres.js';
import { Conversations } from '../electron/conversations/conversations.js';
import { createHost } from '../electron/host/index.js';
import { DEFAULT_MEMORY_SETTINGS } from '../electron/settings/settings.js';
import { Recall } from '../electron/memory/recall/index.js';
import { segmentForIndex } from '../electron/memory/segment.js';
import { MemoryStore } from '../electron/memory/store.js';
import { median, percentile, round } from './util.js';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '100000' },
    memories: { type: 'string', default: '20000' },
    diary: { type: 'string', default: '3000' },
    queries: { type: 'string', default: '500' },
    data: { type: 'string', default: path.join('..', 'shared', 'bench', 'locomo', 'dev') },
    json: { type: 'string' },
    explain: { type: 'boolean', default: false },
    database: { type: 'string' },
    keep: { type: 'string' },
  },
});
const SERVER_URL = values.database;
if (SERVER_URL !== undefined) {
  try {
    checkDatabaseUrl(SERVER_URL);
  } catch (err) {
    console.error(`--database: ${(err as Error).message}`);
    process.exit(2);
  }
}
const N_MESSAGES = Number(values.messages);
const N_MEMORIES = Number(values.memories);
const N_DIARY = Number(values.diary);
const N_QUERIES = Number(values.queries);
for (const [name, n] of Object.entries({ messages: N_MESSAGES, memories: N_MEMORIES, diary: N_DIARY, queries: N_QUERIES })) {
  if (!Number.isInteger(n) || n < 0) {
    console.error(`--${name}: expected a whole number`);
    process.exit(2);
  }
}
/** Written through the app's own write paths, at the end (when the tables are full). */
const APPEND_SAMPLE = Math.min(N_MESSAGES, 5000);
const STORE_SAMPLE = Math.min(N_MEMORIES, 300);
const MESSAGES_PER_CONVERSATION = 40;

// ---- text ----
const dataDir = path.resolve(String(values.data));
const turns: string[] = [];
const names = new Set<string>();
const questions: string[] = [];
for (const file of fs
  .readdirSync(dataDir)
  .filter((f) => f.endsWith('.json'))
  .sort()) {
  const d = JSON.parse(fs.readFileSync(path.join(dataDir, file), 'utf8')) as Record<string, unknown>;
  if (typeof d.speaker_a === 'string') names.add(d.speaker_a);
  if (typeof d.speaker_b === 'string') names.add(d.speaker_b);
  for (const [key, value] of Object.entries(d)) {
    if (!/^session_\d+$/.test(key) || !Array.isArray(value)) continue;
    for (const t of value as { text?: string; blip_caption?: string }[]) {
      if (typeof t.text !== 'string' || !t.text.trim()) continue;
      turns.push(t.blip_caption ? `${t.text} [shared a photo: ${t.blip_caption}]` : t.text);
    }
  }
  for (const q of (d.qa as { question?: string }[] | undefined) ?? []) if (typeof q.question === 'string') questions.push(q.question);
}
if (turns.length === 0 || questions.length === 0) {
  console.error(`--data: no LoCoMo turns and questions in ${dataDir}`);
  process.exit(2);
}

const SEED = 20240501;
let seed = SEED;
const rnd = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32;
const pick = <T>(a: readonly T[]): T => a[Math.floor(rnd() * a.length)]!;
const vocabulary = turns.flatMap((t) => t.split(/\s+/)).filter((w) => /^[a-z]{4,}$/.test(w));
const pool = [
  ...names,
  'Mara',
  'Sam',
  'Lena',
  'Omar',
  'Priya',
  'Kenji',
  'Ana',
  'Tom',
  'Zoe',
  'Ivan',
  'Nadia',
  'Luis',
  'Chen',
  'Ada',
  'Rafa',
  'Ines',
  'Noah',
  'Maya',
  'Eli',
  'Rosa',
];
const nameRe = new RegExp(`\\b(${[...names].map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})\\b`, 'g');
function vary(text: string): string {
  let s = text.replace(nameRe, () => pick(pool));
  if (rnd() < 0.4) s += ` ${pick(turns).replace(nameRe, () => pick(pool))}`;
  return s
    .split(' ')
    .map((w) => (/^[a-z]{4,}$/.test(w) && rnd() < 0.1 ? pick(vocabulary) : w))
    .join(' ');
}
const sentences = turns.flatMap((t) => t.split(/(?<=[.!?])\s+/)).filter((s) => s.split(' ').length >= 6 && s.length < 400);
function memoryText(type: MemoryType): string {
  const name = pick(pool);
  const s = vary(pick(sentences)).trim();
  const lower = s.charAt(0).toLowerCase() + s.slice(1);
  switch (type) {
    case 'opinion':
      return `${name} thinks ${lower}`;
    case 'preference':
      return `${name}'s preference: ${s}`;
    case 'experience':
      return s;
    default:
      return `${name}: ${s}`;
  }
}

/** CPU milliseconds (user + system) of this process since `since`. */
function cpuSince(since: NodeJS.CpuUsage): number {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1000;
}

/** Builds the folder (or, given a URL, the server's database) and measures: the result and the raw recall timings. */
async function run(database?: string) {
  // ---- build ----
  const keep = database ? undefined : values.keep;
  if (keep && fs.existsSync(keep) && fs.readdirSync(keep).length) throw new Error(`--keep: ${keep} is not empty`);
  const scratch = keep ? (fs.mkdirSync(keep, { recursive: true }), path.resolve(keep)) : fs.mkdtempSync(path.join(os.tmpdir(), 'anima-bench-recall-'));
  seed = SEED; // the same text, memories and questions on either engine
  const t0 = performance.now();
  const db: Database = await openDatabase(scratch, database ? { database } : {});
  const conversations = new Conversations(db);
  const start = Date.UTC(2023, 0, 1);
  const conversationIds: string[] = [];
  const conversationCount = Math.max(1, Math.ceil(N_MESSAGES / MESSAGES_PER_CONVERSATION));
  for (let c = 0; c < conversationCount; c++) conversationIds.push(randomUUID());
  await db.query(
    `INSERT INTO conversations (id, title, created_at, updated_at)
     SELECT id, 'Conversation ' || n, $2::timestamptz + n * interval '6 hours', $2::timestamptz + n * interval '6 hours'
     FROM unnest($1::text[]) WITH ORDINALITY AS u(id, n)`,
    [conversationIds, new Date(start).toISOString()],
  );
  const messageAt = (i: number) => new Date(start + Math.floor(i / MESSAGES_PER_CONVERSATION) * 6 * 3600_000 + (i % MESSAGES_PER_CONVERSATION) * 60_000);

  const bulkStart = performance.now();
  const BATCH = 1000;
  for (let i = 0; i < N_MESSAGES - APPEND_SAMPLE; i += BATCH) {
    const cols: string[][] = [[], [], [], [], [], []];
    for (let j = i; j < Math.min(N_MESSAGES - APPEND_SAMPLE, i + BATCH); j++) {
      const content = vary(pick(turns));
      cols[0]!.push(randomUUID());
      cols[1]!.push(conversationIds[Math.floor(j / MESSAGES_PER_CONVERSATION)]!);
      cols[2]!.push(j % 2 ? 'assistant' : 'user');
      cols[3]!.push(content);
      cols[4]!.push(segmentForIndex(content) ?? '');
      cols[5]!.push(messageAt(j).toISOString());
    }
    await db.query(
      `INSERT INTO messages (id, conversation_id, role, content, status, fts_segmented, created_at)
       SELECT id, c, r, t, 'complete', nullif(s, ''), ts::timestamptz
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) AS u(id, c, r, t, s, ts)`,
      cols,
    );
  }
  const bulkMessagesMs = performance.now() - bulkStart;

  const appendStart = performance.now();
  for (let j = N_MESSAGES - APPEND_SAMPLE; j < N_MESSAGES; j++) {
    await conversations.append({
      conversationId: conversationIds[Math.floor(j / MESSAGES_PER_CONVERSATION)]!,
      role: j % 2 ? 'assistant' : 'user',
      content: vary(pick(turns)),
      status: 'complete',
      createdAt: messageAt(j),
    });
  }
  const appendMs = performance.now() - appendStart;

  const memStart = performance.now();
  for (let i = 0; i < N_MEMORIES - STORE_SAMPLE; i += BATCH) {
    const type: string[] = [];
    const content: string[] = [];
    const status: string[] = [];
    for (let j = i; j < Math.min(N_MEMORIES - STORE_SAMPLE, i + BATCH); j++) {
      const t = pick(MEMORY_TYPES);
      type.push(t);
      content.push(memoryText(t).slice(0, 4000));
      // one in ten retired: recall must skip them
      status.push(rnd() < 0.9 ? 'active' : 'expired');
    }
    await db.query(
      `INSERT INTO memories (type, content, status, source, fts_segmented)
       SELECT t, c, s, 'light-sleep', NULL FROM unnest($1::text[], $2::text[], $3::text[]) AS u(t, c, s)`,
      [type, content, status],
    );
  }
  const bulkMemoriesMs = performance.now() - memStart;
  const store = new MemoryStore(db);
  let storeCreated = 0;
  let storeRefused = 0;
  const storeStart = performance.now();
  for (let j = 0; j < STORE_SAMPLE; j++) {
    const t = pick(MEMORY_TYPES);
    try {
      await store.create({ type: t, content: memoryText(t).slice(0, 4000), source: 'light-sleep', actor: 'light-sleep' });
      storeCreated++;
    } catch {
      storeRefused++;
    }
  }
  const storeMs = performance.now() - storeStart;

  const KINDS = ['anchor', 'imprint', 'narrative', 'dream'];
  for (let i = 0; i < N_DIARY; i += BATCH) {
    const day: string[] = [];
    const kind: string[] = [];
    const title: string[] = [];
    const body: string[] = [];
    for (let j = i; j < Math.min(N_DIARY, i + BATCH); j++) {
      const k = KINDS[j % KINDS.length]!;
      day.push(new Date(start + Math.floor(j / KINDS.length) * 86_400_000).toISOString().slice(0, 10));
      kind.push(k);
      const text = `${vary(pick(sentences))} ${vary(pick(sentences))}`;
      title.push(k === 'narrative' ? text.split(' ').slice(0, 6).join(' ') : '');
      body.push(text);
    }
    await db.query(
      `INSERT INTO diary_blocks (day, kind, title, body) SELECT d, k, nullif(t, ''), b FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS u(d, k, t, b)`,
      [day, kind, title, body],
    );
  }
  await db.exec(database ? 'ANALYZE' : 'CHECKPOINT');
  const buildMs = performance.now() - t0;

  function dirBytes(dir: string): number {
    let total = 0;
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, entry.name);
      total += entry.isDirectory() ? dirBytes(p) : fs.statSync(p).size;
    }
    return total;
  }
  const dbBytes = database
    ? Number((await db.query<{ n: string }>('SELECT pg_database_size(current_database())::text AS n')).rows[0]!.n)
    : dirBytes(path.join(scratch, 'db'));
  const dataBytes = fs.existsSync(path.join(scratch, 'db', 'base')) ? dirBytes(path.join(scratch, 'db', 'base')) : 0;
  const walBytes = fs.existsSync(path.join(scratch, 'db', 'pg_wal')) ? dirBytes(path.join(scratch, 'db', 'pg_wal')) : 0;

  // ---- queries ----
  const distinct = [...new Set(questions)];
  for (let i = distinct.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [distinct[i], distinct[j]] = [distinct[j]!, distinct[i]!];
  }
  const queries = distinct.slice(0, Math.min(N_QUERIES, distinct.length));

  const indexStart = performance.now();
  const recall = new Recall({ db });
  await recall.warm();
  const indexMs = performance.now() - indexStart;
  const heapMb = process.memoryUsage().heapUsed / 1e6;

  const activeIds = (await db.query<{ id: number }>(`SELECT id::float8 AS id FROM memories WHERE status = 'active' ORDER BY id LIMIT 20`)).rows.map((r) =>
    Number(r.id),
  );
  const passiveMs: number[] = [];
  const passiveCpuMs: number[] = [];
  const searchMs: number[] = [];
  const directRecallMs: number[] = [];
  let passiveInjected = 0;
  let searchHits = 0;
  for (const query of queries) {
    let t = performance.now();
    const cpu = process.cpuUsage();
    const p = await recall.passive({
      query,
      limit: DEFAULT_MEMORY_SETTINGS.passiveLimit,
      minScore: DEFAULT_MEMORY_SETTINGS.passiveMinScore,
      minRelativeScore: DEFAULT_MEMORY_SETTINGS.passiveMinRelativeScore,
      maxChars: DEFAULT_MEMORY_SETTINGS.passiveMaxChars,
      excludeIds: activeIds,
      timeoutMs: 0,
    });
    passiveMs.push(performance.now() - t);
    passiveCpuMs.push(cpuSince(cpu));
    passiveInjected += p.memories.length;
    t = performance.now();
    searchHits += (await recall.semantic({ query, limit: 10 })).length;
    searchMs.push(performance.now() - t);
    t = performance.now();
    await recall.search({ query, limit: 10 });
    directRecallMs.push(performance.now() - t);
  }

  if (values.explain) {
    const plan = async (label: string, sql: string, params: unknown[]) => {
      const rows = (await db.query<Record<string, string>>(`EXPLAIN (ANALYZE, COSTS OFF, BUFFERS OFF) ${sql}`, params)).rows;
      console.log(`\n-- ${label}\n${rows.map((r) => Object.values(r)[0]).join('\n')}`);
    };
    const maxSeq = Number((await db.query<{ m: number }>('SELECT max(seq)::float8 AS m FROM messages')).rows[0]!.m);
    await plan(
      'high-water marks (every search)',
      `SELECT (SELECT max(seq) FROM messages), (SELECT max(id) FROM memories), (SELECT max(id) FROM memory_changes), (SELECT max(id) FROM diary_blocks)`,
      [],
    );
    await plan(
      'pull of new messages (and one chunk of a build)',
      `SELECT seq, content_fts::text, content FROM messages WHERE seq > $1 AND seq <= $2 ORDER BY seq`,
      [maxSeq - 2000, maxSeq],
    );
    await plan('fetch of the winners', `SELECT id, content FROM messages WHERE seq = ANY($1::bigint[])`, [[maxSeq, maxSeq - 7, maxSeq - 500, maxSeq - 9000]]);
    await plan(
      'boolean query (garden AND tomatoes)',
      `SELECT m.seq FROM messages m WHERE m.content_fts @@ to_tsquery('english', $1) AND m.replaced_by IS NULL AND m.status <> 'streaming' ORDER BY m.seq DESC LIMIT 2000`,
      ["( 'garden' & 'tomatoes' )"],
    );
    await plan('boolean query on memories', `SELECT id FROM memories WHERE search_fts @@ to_tsquery('english', $1) ORDER BY id DESC LIMIT 2000`, [
      "( 'painting' & 'sunset' )",
    ]);
    await plan(
      'journal pull',
      `SELECT id FROM memories WHERE id IN (SELECT memory_id FROM memory_changes WHERE id > $1 AND id <= $2) AND id <= $3`,
      [0, 5, 20000],
    );
  }
  // What the tables and their indexes (TOAST included) take: what the folder is measured against.
  const tablesBytes = Number(
    (
      await db.query<{ n: string }>(
        `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::text AS n FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
          WHERE c.relkind IN ('r', 'm') AND s.nspname = 'public'`,
      )
    ).rows[0]!.n,
  );
  await db.close();

  // Through the host's API: a host opened on the folder, as the app would.
  const hostStart = performance.now();
  const host = await createHost({ dataDir: scratch, detectLocalServers: false, log: () => {}, ...(database ? { database } : {}) });
  const hostOpenMs = performance.now() - hostStart;
  const firstStart = performance.now();
  await host.api['recall.search']({ query: 'warm up: the first search builds the index', limit: 10 });
  const firstSearchMs = performance.now() - firstStart;
  const recallMs: number[] = [];
  const recallCpuMs: number[] = [];
  let recallHits = 0;
  for (const query of queries) {
    const t = performance.now();
    const cpu = process.cpuUsage();
    recallHits += (await host.api['recall.search']({ query, limit: 10 })).length;
    recallMs.push(performance.now() - t);
    recallCpuMs.push(cpuSince(cpu));
  }
  await host.close();
  // The folder after that restart (the app's own open and close): what a person's disk holds after a bulk load.
  const restartBytes = database ? dbBytes : dirBytes(path.join(scratch, 'db'));
  if (keep) console.log(`kept the folder: ${scratch}`);
  else fs.rmSync(scratch, { recursive: true, force: true });

  const stats = (ms: number[]) => ({ p50: round(percentile(ms, 50), 2), p95: round(percentile(ms, 95), 2) });
  const result = {
    recall_ms: stats(recallMs),
    passive_ms: stats(passiveMs),
    search_ms: stats(searchMs),
    db_mb: round(restartBytes / 1e6, 1),
    tables_mb: round(tablesBytes / 1e6, 1),
    db_mb_before_restart: round(dbBytes / 1e6, 1),
    direct_recall_ms: stats(directRecallMs),
    // The process's CPU time per query (user + system): what a query costs when the machine is shared and the wall time is mostly waiting.
    recall_cpu_ms: stats(recallCpuMs),
    passive_cpu_ms: stats(passiveCpuMs),
    mean_hits: {
      recall: round(recallHits / queries.length, 2),
      search: round(searchHits / queries.length, 2),
      passive_injected: round(passiveInjected / queries.length, 2),
    },
    queries: queries.length,
    corpus: { messages: N_MESSAGES, memories: N_MEMORIES, diary_blocks: N_DIARY, conversations: conversationCount },
    write: {
      append_per_s: round(APPEND_SAMPLE / (appendMs / 1000), 0),
      append_ms_mean: round(appendMs / Math.max(1, APPEND_SAMPLE), 3),
      memory_create_per_s: round(STORE_SAMPLE / (storeMs / 1000), 0),
      memory_store_created: storeCreated,
      memory_store_refused: storeRefused,
      bulk_messages_per_s: round((N_MESSAGES - APPEND_SAMPLE) / (bulkMessagesMs / 1000), 0),
      bulk_memories_per_s: round((N_MEMORIES - STORE_SAMPLE) / (bulkMemoriesMs / 1000), 0),
    },
    ...(database ? {} : { db_wal_mb: round(walBytes / 1e6, 1), db_tables_and_indexes_mb: round(dataBytes / 1e6, 1) }),
    index_build_ms: round(indexMs, 0),
    host_open_ms: round(hostOpenMs, 0),
    host_first_search_ms: round(firstSearchMs, 0),
    heap_mb_after_index: round(heapMb, 0),
    build_s: round(buildMs / 1000, 1),
    total_s: round((performance.now() - t0) / 1000, 1),
  };
  return { result, recallMs };
}

const pglite = await run();
const result = pglite.result;
const recallMs = pglite.recallMs;
let postgres: (typeof result & { server: string; server_version: string; recall_p95_vs_pglite: number }) | undefined;
if (SERVER_URL) {
  // A database of the bench's own on that server, dropped afterwards whatever happens.
  const name = `anima_bench_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const admin = new pg.Client({ connectionString: SERVER_URL });
  await admin.connect();
  const version = (await admin.query<{ v: string }>(`SELECT current_setting('server_version') AS v`)).rows[0]!.v;
  await admin.query(`CREATE DATABASE ${name}`);
  try {
    const u = new URL(SERVER_URL);
    u.pathname = `/${name}`;
    console.log(`The same work on PostgreSQL ${version} at ${redactDatabaseUrl(u.toString())}…`);
    const server = await run(u.toString());
    postgres = {
      ...server.result,
      server: redactDatabaseUrl(SERVER_URL),
      server_version: version,
      recall_p95_vs_pglite: round(server.result.recall_ms.p95 / Math.max(0.01, result.recall_ms.p95), 2),
    };
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch((err: Error) => console.error(`could not drop ${name}: ${err.message}`));
    await admin.end();
  }
}
const output = {
  ...result,
  write_per_s: result.write.append_per_s,
  node: process.version,
  cpus: os.cpus().length,
  ...(postgres ? { postgres: { ...postgres, write_per_s: postgres.write.append_per_s } } : {}),
};

console.log(`\nRecall at ${N_MESSAGES} messages, ${N_MEMORIES} memories, ${N_DIARY} diary blocks — ${result.queries} distinct questions`);
console.log(
  `memory_recall (host API, 4 sources)  p50 ${result.recall_ms.p50} ms  p95 ${result.recall_ms.p95} ms  (${result.mean_hits.recall} hits/query; median ${round(median(recallMs), 2)})`,
);
console.log(
  `passive recall (semantic)            p50 ${result.passive_ms.p50} ms  p95 ${result.passive_ms.p95} ms  (${result.mean_hits.passive_injected} injected/query)`,
);
console.log(
  `CPU time per query                   memory_recall p50 ${result.recall_cpu_ms.p50} ms  p95 ${result.recall_cpu_ms.p95} ms; passive p50 ${result.passive_cpu_ms.p50} ms  p95 ${result.passive_cpu_ms.p95} ms`,
);
console.log(`memory_semantic_search               p50 ${result.search_ms.p50} ms  p95 ${result.search_ms.p95} ms  (${result.mean_hits.search} hits/query)`);
console.log(`writes: Conversations.append ${result.write.append_per_s}/s, MemoryStore.create ${result.write.memory_create_per_s}/s (at full size)`);
console.log(
  `database ${result.db_mb} MB on disk after a restart, ${round(result.db_mb / Math.max(0.1, result.tables_mb), 2)}× its tables and indexes (${result.tables_mb} MB); before the restart ${result.db_mb_before_restart} MB (base ${result.db_tables_and_indexes_mb} MB, WAL ${result.db_wal_mb} MB); in-memory index build ${result.index_build_ms} ms, heap ${result.heap_mb_after_index} MB; total ${result.total_s} s`,
);
if (postgres) {
  const p = postgres;
  console.log(`\nPostgreSQL ${p.server_version} (same corpus and questions)`);
  console.log(`memory_recall (host API, 4 sources)  p50 ${p.recall_ms.p50} ms  p95 ${p.recall_ms.p95} ms  (${p.recall_p95_vs_pglite}× PGlite's p95)`);
  console.log(`passive recall (semantic)            p50 ${p.passive_ms.p50} ms  p95 ${p.passive_ms.p95} ms`);
  console.log(`memory_semantic_search               p50 ${p.search_ms.p50} ms  p95 ${p.search_ms.p95} ms`);
  console.log(`writes: Conversations.append ${p.write.append_per_s}/s, MemoryStore.create ${p.write.memory_create_per_s}/s; database ${p.db_mb} MB`);
}
if (values.json) {
  const file = path.resolve(String(values.json));
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(output, null, 2)}\n`);
  console.log(`written to ${path.relative(process.cwd(), file).startsWith('..') ? file : path.relative(process.cwd(), file)}`);
}
