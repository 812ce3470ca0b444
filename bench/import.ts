// Export (and, once it lands, re-import) of a lived-in data folder.
//   npm run bench:import -- [--data DIR] [--generate 100000] [--folder DIR] [--no-sql] [--json OUT]
//
// The folder: by default the LoCoMo dev conversations (--data, default ../shared/bench/locomo/dev),
// loaded through the app's own LoCoMo import (electron/conversations/import-locomo.ts); with
// --generate N, N messages of that corpus's text bulk-loaded into N/1000 conversations, plus N/50
// memories (one in ten with a journal entry) and N/300 diary blocks. --folder DIR exports that data
// folder as it is (Anima must not have it open); when it holds no data yet, it is built there first
// and kept (a second run measures the export alone).
//
// Measured: export_ms (the whole zip: anima.json, the vault, anima.sql — what `anima export` does),
// archive_mb, messages_per_s (messages exported a second); import_ms: that zip imported into a fresh
// data folder through the app's own path (imports.preview's parse and summary, then imports.apply's
// one-transaction restore: electron/imports/anima-archive*.ts), and roundtrip_equal: the fresh folder
// exported again gives the same anima.json (only the moment of the export set aside).
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { strFromU8, unzipSync } from 'fflate';
import { exportArchive } from '../electron/archive/export.js';
import { importLocomo } from '../electron/conversations/import-locomo.js';
import { Conversations } from '../electron/conversations/conversations.js';
import { openDatabase, type Database } from '../electron/db/open.js';
import { archiveCounts, restoreArchive } from '../electron/imports/anima-archive-restore.js';
import { parseImport } from '../electron/imports/detect.js';
import { SettingsStore } from '../electron/settings/settings.js';
import { markImportedHistoryRead } from '../electron/sleep/imported-history.js';
import { MEMORY_TYPES } from '../shared/api.js';
import { locomoFiles, round } from './util.js';

const { values } = parseArgs({
  options: {
    data: { type: 'string', default: path.resolve('..', 'shared', 'bench', 'locomo', 'dev') },
    generate: { type: 'string' },
    folder: { type: 'string' },
    'no-sql': { type: 'boolean', default: false },
    /** Only build the folder (with --folder: a lived-in folder for the end-to-end tests). */
    'build-only': { type: 'boolean', default: false },
    json: { type: 'string' },
  },
});

const files = locomoFiles(values.data);
const corpus = files.map((f) => JSON.parse(fs.readFileSync(path.join(values.data, f), 'utf8')) as unknown);

/** Every turn's text in the corpus (turns only: never the dataset's annotations). */
function turnsOf(raw: unknown): string[] {
  const data = ((raw as { conversation?: unknown }).conversation ?? raw) as Record<string, unknown>;
  return Object.entries(data)
    .filter(([k, v]) => /^session_\d+$/.test(k) && Array.isArray(v))
    .flatMap(([, v]) => (v as { text?: unknown }[]).map((t) => (typeof t.text === 'string' ? t.text : '')).filter(Boolean));
}

async function generate(db: Database, n: number): Promise<void> {
  const turns = corpus.flatMap(turnsOf);
  let seed = 42;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const perConversation = 1000;
  const ids = Array.from({ length: Math.max(1, Math.ceil(n / perConversation)) }, () => randomUUID());
  const start = Date.UTC(2023, 0, 1);
  await db.query(
    `INSERT INTO conversations (id, title, created_at, updated_at)
     SELECT id, 'Conversation ' || n, $2::timestamptz + n * interval '6 hours', $2::timestamptz + n * interval '6 hours'
     FROM unnest($1::text[]) WITH ORDINALITY AS u(id, n)`,
    [ids, new Date(start).toISOString()],
  );
  for (let i = 0; i < n; i += 2000) {
    const cols: string[][] = [[], [], [], [], []];
    for (let j = i; j < Math.min(n, i + 2000); j++) {
      cols[0]?.push(randomUUID());
      cols[1]?.push(ids[Math.floor(j / perConversation)] ?? '');
      cols[2]?.push(j % 2 ? 'assistant' : 'user');
      cols[3]?.push(pick(turns));
      cols[4]?.push(new Date(start + Math.floor(j / perConversation) * 6 * 3600_000 + (j % perConversation) * 60_000).toISOString());
    }
    await db.query(
      `INSERT INTO messages (id, conversation_id, role, content, status, created_at)
       SELECT id, c, r, t, 'complete', ts::timestamptz FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS u(id, c, r, t, ts)`,
      cols,
    );
  }
  const memories = Math.floor(n / 50);
  for (let i = 0; i < memories; i += 1000) {
    const type: string[] = [];
    const content: string[] = [];
    for (let j = i; j < Math.min(memories, i + 1000); j++) {
      type.push(pick(MEMORY_TYPES));
      content.push(`The person said: ${pick(turns)}`.slice(0, 4000));
    }
    await db.query(`INSERT INTO memories (type, content, source) SELECT t, c, 'light-sleep' FROM unnest($1::text[], $2::text[]) AS u(t, c)`, [type, content]);
  }
  await db.query(
    `INSERT INTO memory_changes (memory_id, action, actor, after) SELECT id, 'create', 'light-sleep', jsonb_build_object('content', content) FROM memories WHERE id % 10 = 0`,
  );
  const blocks = Math.floor(n / 300);
  const kinds = ['anchor', 'imprint', 'narrative', 'dream'];
  await db.query(
    `INSERT INTO diary_blocks (day, kind, title, body)
     SELECT to_char(date '2023-01-01' + (g / 4), 'YYYY-MM-DD'), ($2::text[])[1 + g % 4], 'Block ' || g, $3 || g FROM generate_series(0, $1 - 1) g
     ON CONFLICT DO NOTHING`,
    [blocks, kinds, pick(turns)],
  );
}

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-bench-import-'));
const dataDir = values.folder ? path.resolve(values.folder) : path.join(scratch, 'data');
const existing = fs.existsSync(path.join(dataDir, 'db', 'PG_VERSION'));
const db = await openDatabase(dataDir);
let source: string;
const buildStart = performance.now();
if (existing) source = `folder ${dataDir}`;
else if (values.generate) {
  const n = Number(values.generate);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--generate takes a number of messages, not “${values.generate}”`);
  await generate(db, n);
  source = `generated: ${n} messages`;
} else {
  const conversations = new Conversations(db);
  for (const raw of corpus) await importLocomo(conversations, raw);
  source = `LoCoMo dev (${files.length} conversations, imported through import-locomo)`;
}
const buildMs = performance.now() - buildStart;
if (values['build-only']) {
  await db.close();
  console.log(JSON.stringify({ source, build_ms: round(buildMs, 0), folder: dataDir }));
  process.exit(0);
}

const file = path.join(scratch, 'anima-export.zip');
const exported = await exportArchive({ db, appVersion: 'bench', file, alone: true, sql: !values['no-sql'] });
await db.close();

// The import: the zip into a fresh folder, as imports.preview and imports.apply do it.
const freshDir = path.join(scratch, 'imported');
const fresh = await openDatabase(freshDir);
const importStart = performance.now();
const zip = fs.readFileSync(file);
const parsed = parseImport(zip, path.basename(file));
if (!parsed.archive) throw new Error(`the export was read as ${parsed.format}, not as Anima's archive`);
await archiveCounts(fresh, parsed.archive);
const restored = await restoreArchive(parsed.archive, { db: fresh, settings: new SettingsStore(fresh, () => {}), markRead: markImportedHistoryRead });
const importMs = performance.now() - importStart;

// The round trip: the imported folder exported again.
const again = path.join(scratch, 'anima-export-again.zip');
await exportArchive({ db: fresh, appVersion: 'bench', file: again, alone: true, sql: false });
await fresh.close();
const animaJson = (zipFile: string) => {
  const { exportedAt: _at, ...rest } = JSON.parse(
    strFromU8(unzipSync(fs.readFileSync(zipFile), { filter: (f) => f.name === 'anima.json' })['anima.json']!),
  ) as Record<string, unknown>;
  return rest as { sections: Record<string, unknown> };
};
const before = animaJson(file);
const after = animaJson(again);
const differing = Object.keys({ ...before.sections, ...after.sections }).filter(
  (k) => JSON.stringify(before.sections[k]) !== JSON.stringify(after.sections[k]),
);
const roundtripEqual = JSON.stringify(before) === JSON.stringify(after);

const messages = exported.counts.messages ?? 0;
const result = {
  source,
  build_ms: round(buildMs, 0),
  messages,
  memories: exported.counts.memories ?? 0,
  diary_blocks: exported.counts.diary_blocks ?? 0,
  vault_files: exported.vaultFiles,
  phase_ms: exported.phaseMs,
  sql: !values['no-sql'],
  export_ms: round(exported.ms, 0),
  archive_mb: round(exported.bytes / 1024 / 1024, 2),
  messages_per_s: round(messages / (exported.ms / 1000), 0),
  import_ms: round(importMs, 0),
  roundtrip_equal: roundtripEqual,
};
if (restored.messages + restored.versions !== messages) console.error(`imported ${restored.messages + restored.versions} of ${messages} messages`);
if (!roundtripEqual) console.error(`the round trip differs in: ${differing.join(', ') || 'the head'}`);
console.log(JSON.stringify(result, null, 2));
if (values.json) fs.writeFileSync(values.json, `${JSON.stringify(result, null, 2)}\n`);
if (!values.folder) fs.rmSync(scratch, { recursive: true, force: true });
else for (const f of [file, again, freshDir]) fs.rmSync(f, { recursive: true, force: true });
