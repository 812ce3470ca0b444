// LoCoMo retrieval benchmark: every conversation file in DIR is loaded into a fresh data folder
// through the app's own write path (electron/conversations/import-locomo.ts → Conversations.appendMany), then each
// question runs the session-source recall restricted to its own LoCoMo conversation (the restriction
// is part of the search: statistics and candidates come from those conversations only) and is scored
// recall@k over the top k distinct turns against its evidence turns, and all-evidence@k (the share of
// questions whose every evidence turn is in the top k — what a multi-hop answer needs).
// After loading, the entity graph is built the way the app builds it (the GraphIndexer's backfill,
// which the host runs at start for whatever its write queue did not record), and timed.
//   npm run bench:locomo -- [--data DIR] [--k 5,10,20] [--json FILE] [--graph-walk on|off] [--graph-weight W]
//                           [--embed-model DIR [--vector-weight W] [--vector-floor F]] [--keep FOLDER] [--tune JSON] [--skip-graph]
// --keep FOLDER: the data folder is kept in FOLDER and reused by the next run with the same --keep, so
// an experiment on ranking costs a query pass, not a load (LongMemEval dev's 35k turns take minutes to
// load and index). FOLDER holds a manifest (bench-locomo.json) with a hash of the data files, the
// questions and the load's figures; a run whose data differs, or whose folder cannot be opened (one
// written by a newer Anima), loads afresh. A folder opened by newer code is migrated as the app does
// on upgrade. The load's figures (load_ms_per_turn, graph_build_ms) are then the kept load's. A
// non-empty FOLDER without the manifest is refused, never wiped.
// --tune JSON: recall's internal options (RecallInternals: neighbourShare, neighbourMode, …) as one
// object or a list of them; after the run with the defaults, each is measured too and printed as one
// line (recall@10 cat 1–4 and per category). For choosing weights (docs/recall-tuning.md); the JSON
// output is the defaults' run. `--tune @FILE` reads the JSON from FILE (variants too long for a command line).
// DIR defaults to ../shared/bench/locomo/dev. --graph-walk defaults to the app's default
// (GRAPH_WALK_DEFAULT, electron/memory/recall/index.ts), --graph-weight to GRAPH_WEIGHT (fusion.ts).
// --embed-model: a transformers.js model folder (as the model manager installs them under
// <data>/models/<org>/<name>; the repo's toy is electron/models/testing/models/anima-test/tiny-bert,
// whose numbers prove the path only). Every turn is then embedded through the app's embedding service
// (electron/embed/queue.ts, its backfill; timed as embed_ms) and the same questions run twice: without
// recall's vector branch (vector weight 0 — the table and top-level JSON keys, as without the option)
// and with it (--vector-weight, default 1; --vector-floor, default VECTOR_FLOOR, recall/vector.ts);
// both go to the JSON's `vector` object. Exits 1 when the model cannot be loaded or cannot embed here.
// Each question is asked at its own time, passed to recall as `now` the way the app passes the time of
// the person's message: the question's date where the file gives one (LongMemEval's question_date),
// else the date of the conversation's last session (LoCoMo); "last week" in a question is read from it
// (recall/time-window.ts). `--tune '{"timeAware":false}'` measures recall without it.
// `n` counts questions with at least one valid evidence turn. Recall is a fraction 0–1; times are
// milliseconds. Exits 0 when it measured something.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../electron/db/open.js';
import { catalogModels } from '../electron/models/catalog.js';
import { openEmbedder } from '../electron/embed/embedder.js';
import { createEmbeddingService, type EmbeddingProgress, type EmbeddingService } from '../electron/embed/queue.js';
import { EmbedError, type Embedder } from '../electron/embed/types.js';
import { GraphIndexer } from '../electron/graph/indexer.js';
import { EntityStore } from '../electron/graph/store.js';
import { Conversations } from '../electron/conversations/conversations.js';
import { MemoryStore } from '../electron/memory/store.js';
import { importLocomo, parseLocomoDate } from '../electron/conversations/import-locomo.js';
import { GRAPH_WEIGHT } from '../electron/memory/recall/fusion.js';
import { GRAPH_WALK_DEFAULT, Recall } from '../electron/memory/recall/index.js';
import { VectorSlot } from '../electron/embed/active.js';
import { VECTOR_FLOOR } from '../electron/memory/recall/vector.js';
import { locomoFiles, percentile, round } from './util.js';

const { values } = parseArgs({
  options: {
    data: { type: 'string', default: path.join('..', 'shared', 'bench', 'locomo', 'dev') },
    k: { type: 'string', default: '5,10,20' },
    json: { type: 'string' },
    'graph-walk': { type: 'string', default: GRAPH_WALK_DEFAULT ? 'on' : 'off' },
    'graph-weight': { type: 'string' },
    'embed-model': { type: 'string' },
    'vector-weight': { type: 'string', default: '1' },
    'vector-floor': { type: 'string' },
    keep: { type: 'string' },
    tune: { type: 'string' },
    'skip-graph': { type: 'boolean', default: false },
  },
});

const walkArg = String(values['graph-walk']).toLowerCase();
if (walkArg !== 'on' && walkArg !== 'off') {
  console.error('--graph-walk: expected on or off');
  process.exit(2);
}
const graphWalk = walkArg === 'on';
// --skip-graph: no entity graph is built (recall with the walk off does not read it); for ranking
// experiments on a busy machine, where LongMemEval's graph takes most of the load. Graph figures are 0.
const skipGraph = values['skip-graph'] === true;
if (skipGraph && graphWalk) {
  console.error('--skip-graph: the graph walk needs the graph; use --graph-walk off');
  process.exit(2);
}
const graphWeight = values['graph-weight'] === undefined ? GRAPH_WEIGHT : Number(values['graph-weight']);
if (!Number.isFinite(graphWeight) || graphWeight < 0) {
  console.error('--graph-weight: expected a number ≥ 0');
  process.exit(2);
}

const embedModelArg = values['embed-model'];
const vectorWeight = Number(values['vector-weight']);
const vectorFloor = values['vector-floor'] === undefined ? VECTOR_FLOOR : Number(values['vector-floor']);
if (embedModelArg !== undefined) {
  if (!(Number.isFinite(vectorWeight) && vectorWeight > 0)) {
    console.error('--vector-weight: expected a number > 0 (0 is the run without vectors, which is always made)');
    process.exit(2);
  }
  // Cosine similarity: the branch scales scores by 1 − floor, so the floor must stay below 1.
  if (!(Number.isFinite(vectorFloor) && vectorFloor >= -1 && vectorFloor < 1)) {
    console.error('--vector-floor: expected a cosine similarity, -1 ≤ F < 1');
    process.exit(2);
  }
} else if (values['vector-weight'] !== '1' || values['vector-floor'] !== undefined) {
  console.error('--vector-weight and --vector-floor need --embed-model DIR');
  process.exit(2);
}
/**
 * How long a query's embedding may take. Recall's default (VECTOR_BUDGET_MS, 150 ms from the start
 * of the search) leaves the branch out of a search whose query is not embedded in time; this bench
 * measures what the branch does to quality, so the budget is generous enough never to cut it off
 * (the time it costs shows in the query times instead).
 */
const BENCH_VECTOR_BUDGET_MS = 10_000;

/**
 * The embedder takes a models folder and an id inside it. A folder laid out as the app installs
 * models (<models>/<org>/<name>) whose org/name is a catalogue model gets that id, so its query and
 * passage prefixes (e5's "query: ") apply as in the app; any other folder is its own name.
 */
function modelLocation(dir: string): { modelsDir: string; modelId: string } {
  const name = path.basename(dir);
  const orgName = `${path.basename(path.dirname(dir))}/${name}`;
  if (catalogModels({ includeTestModels: true }).some((e) => e.id === orgName && e.task === 'embedding')) {
    return { modelsDir: path.dirname(path.dirname(dir)), modelId: orgName };
  }
  return { modelsDir: path.dirname(dir), modelId: name };
}

// Opened before the (slow) load, so a bad folder fails at once.
let embedder: Embedder | null = null;
let embedLoadMs = 0;
if (embedModelArg !== undefined) {
  const modelDir = path.resolve(String(embedModelArg));
  if (!fs.existsSync(path.join(modelDir, 'config.json'))) {
    console.error(`--embed-model: ${modelDir} has no config.json; give a model folder (config.json, tokenizer.json, onnx/*.onnx)`);
    process.exit(1);
  }
  const loadStart = performance.now();
  try {
    embedder = await openEmbedder(modelLocation(modelDir));
  } catch (err) {
    console.error(`--embed-model: could not load ${modelDir}: ${err instanceof EmbedError ? `${err.code}: ${err.message}` : String(err)}`);
    process.exit(1);
  }
  embedLoadMs = performance.now() - loadStart;
}

let tuneVariants: Record<string, unknown>[] = [];
if (values.tune !== undefined) {
  try {
    const tune = String(values.tune);
    const parsed: unknown = JSON.parse(tune.startsWith('@') ? fs.readFileSync(tune.slice(1), 'utf8') : tune);
    tuneVariants = (Array.isArray(parsed) ? parsed : [parsed]) as Record<string, unknown>[];
    if (!tuneVariants.every((v) => v && typeof v === 'object' && !Array.isArray(v))) throw new Error('expected objects');
  } catch (err) {
    console.error(`--tune: expected a JSON object or a list of them (${(err as Error).message})`);
    process.exit(2);
  }
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

interface Question {
  file: string;
  category: number;
  question: string;
  evidence: string[];
  conversationIds: string[];
  turnOf: Map<string, string>; // messageId → dia_id
}

/** What a kept folder holds beside the database: enough to run the questions without loading again. */
interface KeptLoad {
  format: 1;
  data: string;
  /** Whether the entity graph was built (not with --skip-graph). */
  graphBuilt?: boolean;
  files: number;
  skippedFiles: number;
  droppedQuestions: number;
  turns: number;
  loadMs: number;
  graphMs: number;
  /** The process's CPU time (user + system) in the load and in the graph build: what they cost on a machine shared with other work. */
  loadCpuMs?: number;
  graphCpuMs?: number;
  graphSize: { entities: number; edges: number; mentions: number };
  questions: Omit<Question, 'turnOf'>[];
  /** Per file: messageId → dia_id. */
  turnOf: Record<string, [string, string][]>;
}
const MANIFEST = 'bench-locomo.json';
/** A hash of the data files (names and contents), so a kept folder is reused only for the same data. */
function dataFingerprint(): string {
  const h = crypto.createHash('sha256');
  for (const f of files) {
    h.update(f);
    h.update('\0');
    h.update(fs.readFileSync(path.join(dataDirIn, f)));
    h.update('\0');
  }
  return h.digest('hex');
}
const keepDir = values.keep === undefined ? null : path.resolve(String(values.keep));
let kept: KeptLoad | null = null;
let fingerprint = '';
if (keepDir) {
  fingerprint = dataFingerprint();
  const manifestFile = path.join(keepDir, MANIFEST);
  if (fs.existsSync(manifestFile)) {
    try {
      const m = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as KeptLoad;
      if (m.format === 1 && m.data === fingerprint && (m.graphBuilt !== false || skipGraph)) kept = m;
      else console.log(`--keep: ${keepDir} holds other data; loading afresh`);
    } catch {
      console.log(`--keep: ${manifestFile} is unreadable; loading afresh`);
    }
    if (!kept) fs.rmSync(keepDir, { recursive: true, force: true });
  } else if (fs.existsSync(keepDir) && fs.readdirSync(keepDir).length > 0) {
    console.error(`--keep: ${keepDir} is not empty and holds no ${MANIFEST}; give an empty or new folder`);
    process.exit(2);
  }
}

const scratch = keepDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'anima-bench-locomo-'));
fs.mkdirSync(scratch, { recursive: true });
const t0 = performance.now();
let db: Awaited<ReturnType<typeof openDatabase>>;
try {
  db = await openDatabase(scratch);
} catch (err) {
  if (!kept) throw err;
  // A kept folder this code cannot open (e.g. written by a newer Anima): load afresh.
  console.log(`--keep: could not open the kept folder (${(err as Error).message}); loading afresh`);
  kept = null;
  fs.rmSync(scratch, { recursive: true, force: true });
  fs.mkdirSync(scratch, { recursive: true });
  db = await openDatabase(scratch);
}
// Recall as the host builds it: the database and the slot the embedding service (--embed-model) fills.
const vectors = new VectorSlot();
const recall = new Recall({ db, vectors });
const conversations = new Conversations(db);

const questions: Question[] = [];
let turns = 0;
let skippedFiles = 0;
let droppedQuestions = 0;
let loadMs = 0;
let graphMs = 0;
let loadCpuMs = 0;
let graphCpuMs = 0;
const cpuMs = (since: NodeJS.CpuUsage) => {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1000;
};
let graphSize: { entities: number; edges: number; mentions: number };
if (kept) {
  const maps = new Map(Object.entries(kept.turnOf).map(([file, entries]) => [file, new Map(entries)]));
  for (const q of kept.questions) questions.push({ ...q, turnOf: maps.get(q.file) ?? new Map() });
  ({ turns, skippedFiles, droppedQuestions, loadMs, graphMs, graphSize } = kept);
  loadCpuMs = kept.loadCpuMs ?? 0;
  graphCpuMs = kept.graphCpuMs ?? 0;
  console.log(`--keep: reusing the data folder loaded before (${turns} turns, ${questions.length} questions)`);
} else {
  const loadStart = performance.now();
  const loadCpu = process.cpuUsage();
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
  loadMs = performance.now() - loadStart;
  loadCpuMs = cpuMs(loadCpu);
  // The entity graph, as the app builds it: the host's GraphIndexer records each stored message after
  // its write, and its backfill at start reads whatever that queue missed — here, everything.
  const graphStart = performance.now();
  const graphCpu = process.cpuUsage();
  if (!skipGraph) {
    const graphIndexer = new GraphIndexer(db, new EntityStore(db, { conversations, memories: new MemoryStore(db) }), (level, message) => {
      if (level !== 'info') console.warn(message);
    });
    await graphIndexer.backfill();
    await graphIndexer.close();
  }
  graphMs = skipGraph ? 0 : performance.now() - graphStart;
  graphCpuMs = skipGraph ? 0 : cpuMs(graphCpu);
  graphSize = (
    await db.query<{ entities: number; edges: number; mentions: number }>(
      `SELECT (SELECT count(*) FROM entities WHERE status = 'active')::int AS entities, (SELECT count(*) FROM entity_edges)::int AS edges,
              (SELECT count(*) FROM entity_mentions)::int AS mentions`,
    )
  ).rows[0]!;
  if (keepDir) {
    const manifest: KeptLoad = {
      format: 1,
      data: fingerprint,
      graphBuilt: !skipGraph,
      files: files.length,
      skippedFiles,
      droppedQuestions,
      turns,
      loadMs,
      graphMs,
      loadCpuMs,
      graphCpuMs,
      graphSize,
      questions: questions.map(({ turnOf: _, ...q }) => q),
      turnOf: Object.fromEntries(questions.map((q) => [q.file, [...q.turnOf]])),
    };
    fs.writeFileSync(path.join(keepDir, MANIFEST), JSON.stringify(manifest));
  }
}
// When each question was asked, passed to recall as the app passes the time of the person's message:
// the question's own date where the file gives one (LongMemEval's question_date), else the date of
// the conversation's last session. Read from the data files on every run (a kept folder too).
const askedAt = new Map<string, Map<string, number>>();
const lastSessionAt = new Map<string, number>();
/** "2023/05/25 (Thu) 09:31" (LongMemEval's question_date; read as UTC like the session dates) → epoch ms. */
function questionDate(text: unknown): number | null {
  if (typeof text !== 'string') return null;
  const m = /^\s*(\d{4})[/-](\d{1,2})[/-](\d{1,2})\s*(?:\([A-Za-z]+\))?\s*(?:(\d{1,2}):(\d{2}))?/.exec(text);
  if (!m) return parseLocomoDate(text)?.getTime() ?? null;
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4] ?? 0), Number(m[5] ?? 0));
}
for (const file of files) {
  try {
    const raw = JSON.parse(fs.readFileSync(path.join(dataDirIn, file), 'utf8')) as Record<string, unknown>;
    const data = (raw.conversation && typeof raw.conversation === 'object' ? raw.conversation : raw) as Record<string, unknown>;
    const sessionTimes = Object.keys(data)
      .filter((k) => /^session_\d+_date_time$/.test(k))
      .map((k) => parseLocomoDate(data[k])?.getTime() ?? NaN)
      .filter((t) => Number.isFinite(t));
    if (sessionTimes.length) lastSessionAt.set(file, Math.max(...sessionTimes));
    const qa = Array.isArray(raw.qa) ? raw.qa : Array.isArray(data.qa) ? data.qa : [];
    const times = new Map<string, number>();
    for (const q of qa as Record<string, unknown>[]) {
      const t = q && typeof q.question === 'string' ? questionDate(q.question_date) : null;
      if (t !== null) times.set(q.question as string, t);
    }
    askedAt.set(file, times);
  } catch {
    // A file that does not read was skipped by the load; its questions are not asked.
  }
}
const nowOf = (q: Question): number | undefined => askedAt.get(q.file)?.get(q.question) ?? lastSessionAt.get(q.file);

const indexStart = performance.now();
await recall.warm(['session']);
const indexMs = performance.now() - indexStart;

// `every`: questions whose evidence turns are all in the top k (all-evidence@k).
type Scores = { n: number; sums: Map<number, number>; every: Map<number, number> };
const newScores = (): Scores => ({ n: 0, sums: new Map(ks.map((k) => [k, 0])), every: new Map(ks.map((k) => [k, 0])) });
interface Run {
  perCategory: Map<number, Scores>;
  cat14: Scores;
  all: Scores;
  queryMs: number[];
  walkMs: number[];
}

/** Every question once. `vector`: recall's vector branch options (weight 0 = off); none = recall's defaults, as before. */
async function runQuestions(vector?: { vectorWeight: number; vectorFloor?: number; vectorBudgetMs?: number }, tune?: Record<string, unknown>): Promise<Run> {
  const perCategory = new Map<number, Scores>();
  const cat14 = newScores();
  const all = newScores();
  const queryMs: number[] = [];
  const walkMs: number[] = [];

  for (const q of questions) {
    const start = performance.now();
    const timings = { graphMs: 0, walks: 0 };
    const now = nowOf(q);
    // Recall.search() is Recall.detailed(…).map((d) => d.hit); the detailed form takes the timings.
    const hits = (
      await recall.detailed({
        query: q.question,
        sources: ['session'],
        conversationIds: q.conversationIds,
        limit: maxK,
        graphWalk,
        graphWeight,
        timings,
        // The dates are UTC (import-locomo.ts reads them so); the calendar of "last week" is too.
        ...(now !== undefined ? { now, timeOffsetMinutes: 0 } : {}),
        ...vector,
        ...tune,
      })
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
  return { perCategory, cat14, all, queryMs, walkMs };
}

// With --embed-model: every turn embedded through the app's embedding service (its backfill, which
// the host runs when a model is set), then the questions without the vector branch and with it.
interface VectorMeasure {
  modelId: string;
  dimensions: number;
  embedMs: number;
  backfill: EmbeddingProgress;
  rowsEmbedded: number;
  withVectors: Run;
}
let vectorMeasure: VectorMeasure | null = null;
let service: EmbeddingService | null = null;
const closeAll = async () => {
  await service?.close();
  await embedder?.close();
  await db.close();
  if (!keepDir) fs.rmSync(scratch, { recursive: true, force: true });
};
let without: Run;
if (embedder) {
  const e = embedder;
  let lastProblem = '';
  const embedStart = performance.now();
  let lastPrinted = embedStart;
  service = createEmbeddingService({
    db,
    vectors,
    vectorWeight,
    log: (level, message) => {
      if (level === 'info') return;
      lastProblem = message;
      console.warn(message);
    },
    onProgress: (p) => {
      // The service reports every 0.5 s at most; a line every 5 s is enough here.
      if (!p.finished && performance.now() - lastPrinted < 5000) return;
      lastPrinted = performance.now();
      console.log(`embedding with ${p.model}: ${p.done}/${p.total} rows (${((performance.now() - embedStart) / 1000).toFixed(1)} s)`);
    },
  });
  await service.setEmbedder(e);
  if (service.status().model !== e.modelId) {
    // The service refused the model: no pgvector in this database, or its tables refused the model.
    console.error(`--embed-model: the embedding service could not use ${e.modelId}: ${lastProblem || service.status().lastError || 'unknown reason'}`);
    await closeAll();
    process.exit(1);
  }
  const backfill = await service.backfill();
  const embedMs = performance.now() - embedStart;
  const rowsEmbedded = Number(
    (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM embeddings WHERE model = $1 AND dimensions = $2', [e.modelId, e.dimensions])).rows[0]?.n ??
      0,
  );
  if (!backfill.finished)
    console.warn(`embedding with ${e.modelId}: the backfill did not cover every row (${backfill.done}/${backfill.total}); measuring what is there`);
  console.log(
    `embedded ${rowsEmbedded} rows with ${e.modelId} (${e.dimensions} dimensions) in ${(embedMs / 1000).toFixed(1)} s (model load ${embedLoadMs.toFixed(0)} ms)`,
  );
  // Without the vector branch first (weight 0: exactly recall without a model), then with it.
  without = await runQuestions({ vectorWeight: 0 });
  const withVectors = await runQuestions({ vectorWeight, vectorFloor, vectorBudgetMs: BENCH_VECTOR_BUDGET_MS });
  vectorMeasure = { modelId: e.modelId, dimensions: e.dimensions, embedMs, backfill, rowsEmbedded, withVectors };
} else {
  without = await runQuestions();
}
const tuned: [Record<string, unknown>, Run][] = [];
for (const variant of tuneVariants) tuned.push([variant, await runQuestions(undefined, variant)]);
const { perCategory, cat14, all, queryMs, walkMs } = without;
await closeAll();

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
const rowsOf = (r: Run): [string, Scores][] => [
  ...[...r.perCategory.entries()].sort((a, b) => a[0] - b[0]).map(([c, s]) => [`${c} ${CATEGORY_NAMES[c] ?? ''}`.trim(), s] as [string, Scores]),
  ['cat 1–4', r.cat14],
  ['all', r.all],
];
const rows = rowsOf(without);
const shown = [...new Set(asked)].sort((a, b) => a - b);
const printTable = (rows: [string, Scores][]) => {
  console.log(['category'.padEnd(16), 'n'.padStart(5), ...shown.map((k) => `R@${k}`.padStart(7)), ...shown.map((k) => `AE@${k}`.padStart(7))].join(' '));
  for (const [name, s] of rows) {
    const sm = summary(s);
    const ae = allEvidence(s);
    console.log(
      [
        name.padEnd(16),
        String(s.n).padStart(5),
        ...shown.map((k) => Number(sm[`r${k}`]).toFixed(3).padStart(7)),
        ...shown.map((k) => Number(ae[`r${k}`]).toFixed(3).padStart(7)),
      ].join(' '),
    );
  }
};
console.log(
  `\nLoCoMo session recall — ${files.length - skippedFiles} file(s), ${turns} turns, ${questions.length} questions with evidence` +
    (droppedQuestions ? ` (${droppedQuestions} without valid evidence left out)` : '') +
    `; graph walk ${graphWalk ? `on (weight ${graphWeight})` : 'off'}` +
    (vectorMeasure ? '; without the vector branch' : ''),
);
printTable(rows);
if (vectorMeasure) {
  const w = vectorMeasure.withVectors;
  console.log(
    `\nwith the vector branch — ${vectorMeasure.modelId} (${vectorMeasure.dimensions} dimensions), weight ${vectorWeight}, floor ${vectorFloor}, query budget ${BENCH_VECTOR_BUDGET_MS} ms`,
  );
  printTable(rowsOf(w));
}
console.log('(R@k: recall@k; AE@k: all-evidence@k, the share of questions with every evidence turn in the top k)');
if (tuned.length) {
  const r10 = (s: Scores) => (s.n ? (s.sums.get(10)! / s.n).toFixed(3) : '—');
  const line = (name: string, r: Run) =>
    `${r10(r.cat14)} [${[...r.perCategory.entries()]
      .filter(([c]) => c >= 1 && c <= 4)
      .sort((a, b) => a[0] - b[0])
      .map(([c, s]) => `${c}: ${r10(s)}`)
      .join(', ')}]  ${name}`;
  console.log('\n--tune: R@10 cat 1–4 [per category]');
  console.log(line('defaults', without));
  // A variant may name itself ("label"): one whose lists are long prints that instead of itself.
  for (const [variant, r] of tuned) console.log(line(JSON.stringify(variant.label ?? variant), r));
}
const p50 = queryMs.length ? percentile(queryMs, 50) : 0;
const p95 = queryMs.length ? percentile(queryMs, 95) : 0;
const walkP50 = walkMs.length ? percentile(walkMs, 50) : 0;
const walkP95 = walkMs.length ? percentile(walkMs, 95) : 0;
console.log(
  `query ms: p50 ${p50.toFixed(2)}, p95 ${p95.toFixed(2)}; load ${(loadMs / 1000).toFixed(1)} s (${turns ? (loadMs / turns).toFixed(2) : 0} ms/turn; CPU ${(loadCpuMs / 1000).toFixed(1)} s), load with the graph ${((loadMs + graphMs) / 1000).toFixed(1)} s (CPU ${((loadCpuMs + graphCpuMs) / 1000).toFixed(1)} s), index build ${indexMs.toFixed(0)} ms, total ${((performance.now() - t0) / 1000).toFixed(1)} s`,
);
console.log(
  `entity graph: built in ${(graphMs / 1000).toFixed(1)} s (graph_ms_per_turn ${turns ? (graphMs / turns).toFixed(2) : 0}): ${graphSize.entities} entities, ${graphSize.edges} edges, ${graphSize.mentions} mentions` +
    (graphWalk ? `; walk ms a query: p50 ${walkP50.toFixed(2)}, p95 ${walkP95.toFixed(2)} (${walkMs.length} walks)` : ''),
);
const recallOf = (r: Run) => {
  const p50 = r.queryMs.length ? percentile(r.queryMs, 50) : 0;
  const p95 = r.queryMs.length ? percentile(r.queryMs, 95) : 0;
  const byCategory = [...r.perCategory.entries()].sort((a, b) => a[0] - b[0]);
  return {
    cat1_4: summary(r.cat14),
    all: summary(r.all),
    per_category: Object.fromEntries(byCategory.map(([c, s]) => [String(c), summary(s)])),
    all_evidence: {
      cat1_4: allEvidence(r.cat14),
      all: allEvidence(r.all),
      per_category: Object.fromEntries(byCategory.map(([c, s]) => [String(c), allEvidence(s)])),
    },
    query_ms: { p50: round(p50, 2), p95: round(p95, 2) },
  };
};
const vectorResult = vectorMeasure
  ? (() => {
      const off = recallOf(without);
      const on = recallOf(vectorMeasure.withVectors);
      console.log(
        `vector branch: query ms p50 ${off.query_ms.p50.toFixed(2)} without, ${on.query_ms.p50.toFixed(2)} with (p95 ${off.query_ms.p95.toFixed(2)}, ${on.query_ms.p95.toFixed(2)}); ` +
          `embedded ${vectorMeasure.rowsEmbedded} rows in ${vectorMeasure.embedMs.toFixed(0)} ms (${vectorMeasure.rowsEmbedded ? (vectorMeasure.embedMs / vectorMeasure.rowsEmbedded).toFixed(2) : 0} ms/row), model load ${embedLoadMs.toFixed(0)} ms`,
      );
      return {
        model: vectorMeasure.modelId,
        dimensions: vectorMeasure.dimensions,
        weight: vectorWeight,
        floor: vectorFloor,
        query_budget_ms: BENCH_VECTOR_BUDGET_MS,
        load_ms: round(embedLoadMs, 1),
        embed_ms: round(vectorMeasure.embedMs, 1),
        rows_embedded: vectorMeasure.rowsEmbedded,
        backfill: { done: vectorMeasure.backfill.done, total: vectorMeasure.backfill.total, finished: vectorMeasure.backfill.finished },
        without: off,
        with: on,
        query_ms_p50_without: off.query_ms.p50,
        query_ms_p50_with: on.query_ms.p50,
      };
    })()
  : null;

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
  graph_ms_per_turn: turns ? round(graphMs / turns, 3) : 0,
  graph: graphSize,
  // The load through the app's write path and the graph, wall and CPU seconds (on a shared machine the wall time is mostly waiting).
  load_s: round(loadMs / 1000, 1),
  load_cpu_s: round(loadCpuMs / 1000, 1),
  load_with_graph_s: round((loadMs + graphMs) / 1000, 1),
  load_with_graph_cpu_s: round((loadCpuMs + graphCpuMs) / 1000, 1),
  graph_walk_ms: { p50: round(walkP50, 2), p95: round(walkP95, 2), walks: walkMs.length },
  node: process.version,
  cpus: os.cpus().length,
  // Added with --embed-model only: the questions without recall's vector branch (the same run as the
  // keys above) and with it.
  ...(vectorResult ? { vector: vectorResult } : {}),
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
