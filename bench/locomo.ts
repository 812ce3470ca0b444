// LoCoMo retrieval benchmark: every conversation file in DIR is loaded into a fresh data folder
// through the app's own write path (electron/host/import-locomo.ts → Conversations.append), then each
// question runs the session-source recall restricted to its own LoCoMo conversation (the restriction
// is part of the search: statistics and candidates come from those conversations only) and is scored
// recall@k over the top k distinct turns against its evidence turns, and all-evidence@k (the share of
// questions whose every evidence turn is in the top k — what a multi-hop answer needs).
// After loading, the entity graph is built the way the app builds it (the GraphIndexer's backfill,
// which the host runs at start for whatever its write queue did not record), and timed.
//   npm run bench:locomo -- [--data DIR] [--k 5,10,20] [--json FILE] [--graph-walk on|off] [--graph-weight W]
// DIR defaults to ../shared/bench/locomo/dev. --graph-walk defaults to the app's default
// (GRAPH_WALK_DEFAULT, electron/memory/recall/index.ts), --graph-weight to GRAPH_WEIGHT (fusion.ts).
// `n` counts questions with at least one valid evidence turn. Recall is a fraction 0–1; times are
// milliseconds. Exits 0 when it measured something.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../electron/db/open.js';
import { GraphIndexer } from '../electron/graph/indexer.js';
import { EntityStore } from '../electron/graph/store.js';
import { Conversations } from '../electron/host/conversations.js';
import { importLocomo } from '../electron/host/import-locomo.js';
import { GRAPH_WEIGHT } from '../electron/memory/recall/fusion.js';
import { GRAPH_WALK_DEFAULT, recallDetailed, warmRecallIndex } from '../electron/memory/recall/index.js';
import { locomoFiles, percentile, round } from './util.js';

const { values } = parseArgs({
  options: {
    data: { type: 'string', default: path.join('..', 'shared', 'bench', 'locomo', 'dev') },
    k: { type: 'string', default: '5,10,20' },
    json: { type: 'string' },
    'graph-walk': { type: 'string', default: GRAPH_WALK_DEFAULT ? 'on' : 'off' },
    'graph-weight': { type: 'string' },
  },
});

const walkArg = String(values['graph-walk']).toLowerCase();
if (walkArg !== 'on' && walkArg !== 'off') {
  console.error('--graph-walk: expected on or off');
  process.exit(2);
}
const graphWalk = walkArg === 'on';
const graphWeight = values['graph-weight'] === undefined ? GRAPH_WEIGHT : Number(values['graph-weight']);
if (!Number.isFinite(graphWeight) || graphWeight < 0) {
  console.error('--graph-weight: expected a number ≥ 0');
  process.exit(2);
}

const REQUIRED_K = [5, 10, 20];
const asked = String(values.k)
  .split(',')
  .map((s) => Number(s.trim()))
  .filter((n) => Number.isInteger(n) && n > 0);
if (asked.length === 0) {
  console.error('--k: expected a comma-separated list of positive whole numbers, e.g. 5,10,20');
  process.exit(2);
}
// r5, r10 and r20 are always written; any other k asked for is added.
const ks = [...new Set([...asked, ...REQUIRED_K])].sort((a, b) => a - b);
const maxK = Math.max(...ks);

const dataDirIn = path.resolve(String(values.data));
const files = locomoFiles(dataDirIn);

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-bench-locomo-'));
const t0 = performance.now();
const db = await openDatabase(scratch);
const conversations = new Conversations(db);

interface Question {
  file: string;
  category: number;
  question: string;
  evidence: string[];
  conversationIds: string[];
  turnOf: Map<string, string>; // messageId → dia_id
}
const questions: Question[] = [];
let turns = 0;
let skippedFiles = 0;
let droppedQuestions = 0;
const loadStart = performance.now();
for (const file of files) {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(path.join(dataDirIn, file), 'utf8'));
  } catch (err) {
    console.warn(`skipped ${file}: not JSON (${(err as Error).message})`);
    skippedFiles++;
    continue;
  }
  try {
    const imported = await importLocomo(conversations, raw);
    turns += imported.messageCount;
    const turnOf = new Map([...imported.turns].map(([dia, t]) => [t.messageId, dia]));
    for (const q of imported.qa) {
      if (q.evidence.length === 0) {
        droppedQuestions++;
        continue;
      }
      questions.push({ file, category: q.category, question: q.question, evidence: q.evidence, conversationIds: imported.conversationIds, turnOf });
    }
  } catch (err) {
    console.warn(`skipped ${file}: ${(err as Error).message}`);
    skippedFiles++;
  }
}
const loadMs = performance.now() - loadStart;
// The entity graph, as the app builds it: the host's GraphIndexer records each stored message after
// its write, and its backfill at start reads whatever that queue missed — here, everything.
const graphStart = performance.now();
const graphIndexer = new GraphIndexer(db, new EntityStore(db), (level, message) => {
  if (level !== 'info') console.warn(message);
});
await graphIndexer.backfill();
await graphIndexer.close();
const graphMs = performance.now() - graphStart;
const graphSize = (
  await db.query<{ entities: number; edges: number; mentions: number }>(
    `SELECT (SELECT count(*) FROM entities WHERE status = 'active')::int AS entities, (SELECT count(*) FROM entity_edges)::int AS edges,
            (SELECT count(*) FROM entity_mentions)::int AS mentions`,
  )
).rows[0]!;
const indexStart = performance.now();
await warmRecallIndex(db, ['session']);
const indexMs = performance.now() - indexStart;

// `every`: questions whose evidence turns are all in the top k (all-evidence@k).
type Scores = { n: number; sums: Map<number, number>; every: Map<number, number> };
const newScores = (): Scores => ({ n: 0, sums: new Map(ks.map((k) => [k, 0])), every: new Map(ks.map((k) => [k, 0])) });
const perCategory = new Map<number, Scores>();
const cat14 = newScores();
const all = newScores();
const queryMs: number[] = [];
const walkMs: number[] = [];

for (const q of questions) {
  const start = performance.now();
  const timings = { graphMs: 0, walks: 0 };
  // recall() is recallDetailed(…).map((d) => d.hit); the detailed form takes the timings.
  const hits = (
    await recallDetailed(db, { query: q.question, sources: ['session'], conversationIds: q.conversationIds, limit: maxK, graphWalk, graphWeight, timings })
  ).map((d) => d.hit);
  queryMs.push(performance.now() - start);
  if (timings.walks) walkMs.push(timings.graphMs);
  // Distinct turns, in rank order.
  const ranked: string[] = [];
  for (const h of hits) {
    if (h.link.kind !== 'message') continue;
    const dia = q.turnOf.get(h.link.messageId);
    if (dia && !ranked.includes(dia)) ranked.push(dia);
  }
  const targets = [all, ...(q.category >= 1 && q.category <= 4 ? [cat14] : [])];
  let cat = perCategory.get(q.category);
  if (!cat) perCategory.set(q.category, (cat = newScores()));
  targets.push(cat);
  for (const s of targets) s.n++;
  for (const k of ks) {
    const top = new Set(ranked.slice(0, k));
    const r = q.evidence.filter((e) => top.has(e)).length / q.evidence.length;
    for (const s of targets) {
      s.sums.set(k, s.sums.get(k)! + r);
      if (r === 1) s.every.set(k, s.every.get(k)! + 1);
    }
  }
}
await db.close();
fs.rmSync(scratch, { recursive: true, force: true });

const summary = (s: Scores) => {
  const out: Record<string, number> = { n: s.n };
  for (const k of ks) out[`r${k}`] = s.n ? round(s.sums.get(k)! / s.n, 4) : 0;
  return out;
};
const allEvidence = (s: Scores) => {
  const out: Record<string, number> = { n: s.n };
  for (const k of ks) out[`r${k}`] = s.n ? round(s.every.get(k)! / s.n, 4) : 0;
  return out;
};
const CATEGORY_NAMES: Record<number, string> = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop', 5: 'adversarial' };
const rows: [string, Scores][] = [
  ...[...perCategory.entries()].sort((a, b) => a[0] - b[0]).map(([c, s]) => [`${c} ${CATEGORY_NAMES[c] ?? ''}`.trim(), s] as [string, Scores]),
  ['cat 1–4', cat14],
  ['all', all],
];
const shown = [...new Set(asked)].sort((a, b) => a - b);
console.log(`\nLoCoMo session recall — ${files.length - skippedFiles} file(s), ${turns} turns, ${questions.length} questions with evidence` +
  (droppedQuestions ? ` (${droppedQuestions} without valid evidence left out)` : '') +
  `; graph walk ${graphWalk ? `on (weight ${graphWeight})` : 'off'}`);
console.log(['category'.padEnd(16), 'n'.padStart(5), ...shown.map((k) => `R@${k}`.padStart(7)), ...shown.map((k) => `AE@${k}`.padStart(7))].join(' '));
for (const [name, s] of rows) {
  const sm = summary(s);
  const ae = allEvidence(s);
  console.log(
    [name.padEnd(16), String(s.n).padStart(5), ...shown.map((k) => Number(sm[`r${k}`]).toFixed(3).padStart(7)), ...shown.map((k) => Number(ae[`r${k}`]).toFixed(3).padStart(7))].join(' '),
  );
}
console.log('(R@k: recall@k; AE@k: all-evidence@k, the share of questions with every evidence turn in the top k)');
const p50 = queryMs.length ? percentile(queryMs, 50) : 0;
const p95 = queryMs.length ? percentile(queryMs, 95) : 0;
const walkP50 = walkMs.length ? percentile(walkMs, 50) : 0;
const walkP95 = walkMs.length ? percentile(walkMs, 95) : 0;
console.log(`query ms: p50 ${p50.toFixed(2)}, p95 ${p95.toFixed(2)}; load ${(loadMs / 1000).toFixed(1)} s (${turns ? (loadMs / turns).toFixed(2) : 0} ms/turn), index build ${indexMs.toFixed(0)} ms, total ${((performance.now() - t0) / 1000).toFixed(1)} s`);
console.log(
  `entity graph: built in ${(graphMs / 1000).toFixed(1)} s (${turns ? (graphMs / turns).toFixed(2) : 0} ms/turn): ${graphSize.entities} entities, ${graphSize.edges} edges, ${graphSize.mentions} mentions` +
    (graphWalk ? `; walk ms a query: p50 ${walkP50.toFixed(2)}, p95 ${walkP95.toFixed(2)} (${walkMs.length} walks)` : ''),
);

const result = {
  cat1_4: summary(cat14),
  all: summary(all),
  per_category: Object.fromEntries([...perCategory.entries()].sort((a, b) => a[0] - b[0]).map(([c, s]) => [String(c), summary(s)])),
  query_ms: { p50: round(p50, 2), p95: round(p95, 2) },
  files: files.length - skippedFiles,
  skipped_files: skippedFiles,
  turns,
  load_ms_per_turn: turns ? round(loadMs / turns, 3) : 0,
  index_build_ms: round(indexMs, 1),
  k: ks,
  // Added with the graph-aware recall (the keys above are read by other programs and stay as they are).
  graph_walk: graphWalk ? 'on' : 'off',
  graph_weight: graphWeight,
  all_evidence: {
    cat1_4: allEvidence(cat14),
    all: allEvidence(all),
    per_category: Object.fromEntries([...perCategory.entries()].sort((a, b) => a[0] - b[0]).map(([c, s]) => [String(c), allEvidence(s)])),
  },
  graph_build_ms: round(graphMs, 1),
  graph: graphSize,
  graph_walk_ms: { p50: round(walkP50, 2), p95: round(walkP95, 2), walks: walkMs.length },
  node: process.version,
  cpus: os.cpus().length,
};
if (values.json) {
  const file = path.resolve(String(values.json));
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`written to ${path.relative(process.cwd(), file).startsWith('..') ? file : path.relative(process.cwd(), file)}`);
}
if (all.n === 0) {
  console.error('No question had a valid evidence turn: nothing was measured.');
  process.exit(1);
}
