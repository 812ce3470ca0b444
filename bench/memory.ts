// Memory quality without a model: what the write path merges, and what passive recall injects,
// measured through the app's own code — MemoryStore.create (electron/memory/store.ts) for every write,
// Recall.passive (electron/memory/recall/index.ts) with the default memory settings for every read.
//   npm run bench:memory -- [--data DIR] [--pairs FILE] [--offtopic FILE] [--json OUT]
//                           [--pair-db reset|fresh] [--observation-writes create|sleep] [--holdout FILE,FILE]
//                           [--candidates OUT]
// DIR defaults to ../shared/bench/locomo/dev, FILE to ../shared/bench/memory/pairs-dev.json and
// bench/data/offtopic.json.
//
// - pairs: for each pair {type, a, b, same, why}, an empty memory store; `a` then `b` are saved with
//   MemoryStore.create (source 'user', actor 'person', the pair's type). The pair merged when the save
//   of `b` came back with outcome 'updated' on the memory `a` became (create's near-duplicate path:
//   same words up to case and punctuation, or pg_trgm similarity ≥ NEAR_DUPLICATE_SIMILARITY).
//   wrong_merges: pairs with same=false that merged; missed_duplicates: same=true kept as two.
//   --pair-db reset (default): one database emptied between pairs (DELETE of the memory tables, ~20 ms);
//   fresh: a new data folder per pair from the migrated template (~2 s a pair, the same figures).
// - observations: per LoCoMo file, a fresh data folder (from the migrated template); every
//   `session_N_observation` entry, in session order, saved as a 'world' memory the way light sleep
//   saves what the model extracted (source and actor 'light-sleep', its reason, validFrom/validTo null;
//   no source messages or entity names, there being no model). `merged`: saves that updated an
//   existing memory instead of adding one. --observation-writes sleep saves each session as light
//   sleep does, prepareCreates then one batch (near-duplicates inside one batch are then only caught
//   when they are the same words); create (default) saves one at a time with MemoryStore.create.
// - passive: the questions of categories 1–4 with at least one evidence dia_id that is the evidence
//   of an observation of that file, each run as passive recall on that file's store with the default
//   settings (DEFAULT_MEMORY_SETTINGS: limit, minScore, minRelativeScore, maxChars; resident memories
//   excluded as electron/agent/memory-turn.ts does — none in these stores). No time limit: the app
//   gives up after DEFAULT_PASSIVE_TIMEOUT_MS, and the runs that took longer are counted apart. An
//   injected memory is evidence when the dia_ids of the observations it holds (a merged memory holds
//   both) meet the question's evidence. hit_rate: share of questions with ≥ 1 evidence memory
//   injected; injected_per_question: injected memories ÷ questions; precision: injected evidence
//   memories ÷ injected memories (0 when none was injected). Also per category, printed.
// - offtopic: every off-topic message (greetings, thanks, small talk, general knowledge, arithmetic,
//   writing and coding tasks; English and Chinese) as passive recall, default settings, on every
//   file's store that holds at least one memory. A run is one (message, store) pair. any_rate: share
//   of runs that injected ≥ 1 memory; injected_per_message: injected memories ÷ runs.
//
// --holdout names some of DIR's files (comma-separated, as listed there): the passive and off-topic
// figures are then also printed for those files and for the rest apart (tune on one group, check on
// the other); the JSON stays the figures of all files.
//
// --candidates OUT writes, for every question and off-topic run, the first CANDIDATES_DEPTH memory hits
// of the search passive recall runs, as its relevance rule sees them (score, coverage, shared words,
// text) with whether each is evidence: a rule (relevance.ts chooseRelevant over `hits.slice(0, limit +
// PASSIVE_CANDIDATES_EXTRA)`) can then be measured offline in seconds instead of a run of this bench.
// docs/recall-tuning.md ("Passive recall") was measured that way.
//
// Input files are checked first: a pairs or off-topic file that is missing, not JSON or not in its
// format stops the bench (exit 2, with the place of the problem); a LoCoMo file that is not in the
// format is skipped with the reason (exit 2 when none is left). Exit 1 when nothing could be
// measured; 0 otherwise. Fractions are 0–1, times milliseconds.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ApiError, MEMORY_TYPES, type MemoryType, type SaveMemoryResult } from '../shared/api.js';
import { dumpTemplate, openDatabase, type Database } from '../electron/db/open.js';
import { normaliseEvidence, parseLocomoDate } from '../electron/conversations/import-locomo.js';
import { DEFAULT_MEMORY_SETTINGS } from '../electron/settings/settings.js';
import { Recall } from '../electron/memory/recall/index.js';
import { DEFAULT_PASSIVE_TIMEOUT_MS } from '../electron/memory/recall/passive.js';
import { buildResident } from '../electron/memory/resident.js';
import { MemoryStore, type MemoryWrite } from '../electron/memory/store.js';
import { locomoFiles, percentile, round } from './util.js';

const DEFAULT_OFFTOPIC = path.relative(process.cwd(), fileURLToPath(new URL('./data/offtopic.json', import.meta.url)));

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

let values: {
  data: string;
  pairs: string;
  offtopic: string;
  json?: string;
  'pair-db': string;
  'observation-writes': string;
  holdout?: string;
  candidates?: string;
};
try {
  values = parseArgs({
    options: {
      data: { type: 'string', default: path.join('..', 'shared', 'bench', 'locomo', 'dev') },
      pairs: { type: 'string', default: path.join('..', 'shared', 'bench', 'memory', 'pairs-dev.json') },
      offtopic: { type: 'string', default: DEFAULT_OFFTOPIC },
      json: { type: 'string' },
      'pair-db': { type: 'string', default: 'reset' },
      'observation-writes': { type: 'string', default: 'create' },
      holdout: { type: 'string' },
      candidates: { type: 'string' },
    },
  }).values as typeof values;
} catch (err) {
  fail(
    `${(err as Error).message}\nusage: npm run bench:memory -- [--data DIR] [--pairs FILE] [--offtopic FILE] [--json OUT] [--pair-db reset|fresh] [--observation-writes create|sleep] [--holdout FILE,FILE] [--candidates OUT]`,
  );
}
const pairDb = values['pair-db'];
if (pairDb !== 'reset' && pairDb !== 'fresh') fail('--pair-db: expected reset or fresh');
const observationWrites = values['observation-writes'];
if (observationWrites !== 'create' && observationWrites !== 'sleep') fail('--observation-writes: expected create or sleep');

// ---- inputs ----

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function readJson(file: string, flag: string): unknown {
  if (!fs.existsSync(file) || fs.statSync(file).isDirectory()) fail(`${flag}: ${file} is not a file`);
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    fail(`${flag}: ${file} is not JSON (${(err as Error).message})`);
  }
}

interface Pair {
  type: MemoryType;
  a: string;
  b: string;
  same: boolean;
  why: string;
}

/** An array of {type, a, b, same, why} (or {"pairs": [...]}); `why` may be left out. */
function readPairs(file: string): Pair[] {
  const raw = readJson(file, '--pairs');
  const list = Array.isArray(raw) ? raw : isObject(raw) && Array.isArray(raw.pairs) ? raw.pairs : null;
  if (!list) fail(`--pairs: ${file}: expected an array of {type, a, b, same, why}`);
  if (list.length === 0) fail(`--pairs: ${file}: the list of pairs is empty`);
  return list.map((p: unknown, i): Pair => {
    const where = `--pairs: ${file}: pair ${i + 1}`;
    if (!isObject(p)) fail(`${where}: expected an object {type, a, b, same, why}, got ${JSON.stringify(p)}`);
    if (typeof p.type !== 'string' || !MEMORY_TYPES.includes(p.type as MemoryType)) {
      fail(`${where}: type must be one of ${MEMORY_TYPES.join(', ')} (got ${JSON.stringify(p.type)})`);
    }
    for (const key of ['a', 'b'] as const) {
      const v = p[key];
      if (typeof v !== 'string' || !v.trim()) fail(`${where}: ${key} must be a non-empty string (got ${JSON.stringify(v)})`);
    }
    if (typeof p.same !== 'boolean') fail(`${where}: same must be true or false (got ${JSON.stringify(p.same)})`);
    if (p.why !== undefined && typeof p.why !== 'string') fail(`${where}: why must be a string (got ${JSON.stringify(p.why)})`);
    return { type: p.type as MemoryType, a: p.a as string, b: p.b as string, same: p.same, why: (p.why as string | undefined) ?? '' };
  });
}

/** An array of strings, or {"messages": [...]}. */
function readOfftopic(file: string): string[] {
  const raw = readJson(file, '--offtopic');
  const list = Array.isArray(raw) ? raw : isObject(raw) && Array.isArray(raw.messages) ? raw.messages : null;
  if (!list) fail(`--offtopic: ${file}: expected an array of strings or {"messages": [...]}`);
  if (list.length === 0) fail(`--offtopic: ${file}: the list of messages is empty`);
  list.forEach((m: unknown, i) => {
    if (typeof m !== 'string' || !m.trim()) fail(`--offtopic: ${file}: message ${i + 1} must be a non-empty string (got ${JSON.stringify(m)})`);
  });
  return list as string[];
}

interface Observation {
  session: number;
  speaker: string;
  text: string;
  /** Normalised, and only dia_ids of turns the file has. */
  evidence: string[];
  /** The session's day (YYYY-MM-DD), for the reason light sleep writes; null when unreadable. */
  day: string | null;
}

interface Question {
  category: number;
  question: string;
  evidence: string[];
}

interface Conversation {
  file: string;
  speakers: string;
  observations: Observation[];
  questions: Question[];
}

/**
 * One LoCoMo file: its turns' dia_ids (to normalise evidence against), its observations and its
 * questions. Observations are read from the conversation object, beside it, or under `observation`
 * (the layouts the dataset has been distributed in). Throws, naming the place, when it is not in the format.
 */
function parseLocomo(raw: unknown): Omit<Conversation, 'file'> {
  if (!isObject(raw)) throw new Error('expected a LoCoMo conversation (a JSON object)');
  const data = isObject(raw.conversation) ? raw.conversation : raw;
  const a = data.speaker_a;
  const b = data.speaker_b;
  if (typeof a !== 'string' || typeof b !== 'string') throw new Error('speaker_a and speaker_b (strings) are required');
  const known = new Set<string>();
  let sessions = 0;
  for (const [key, value] of Object.entries(data)) {
    if (!/^session_\d+$/.test(key)) continue;
    if (!Array.isArray(value)) throw new Error(`${key}: expected a list of turns`);
    sessions++;
    for (const turn of value) {
      const id = isObject(turn) ? normaliseEvidence([turn.dia_id])[0] : undefined;
      if (id) known.add(id);
    }
  }
  if (sessions === 0) throw new Error('no session_N lists of turns');

  const observations: Observation[] = [];
  const seen = new Set<string>();
  for (const holder of [data, raw, isObject(raw.observation) ? raw.observation : {}]) {
    for (const [key, value] of Object.entries(holder)) {
      const m = /^session_(\d+)_observation$/.exec(key);
      if (!m || seen.has(key)) continue;
      seen.add(key);
      const session = Number(m[1]);
      if (!isObject(value)) throw new Error(`${key}: expected {speaker: [[text, evidence dia_id(s)], …]}`);
      const date = parseLocomoDate(data[`session_${session}_date_time`]);
      for (const [speaker, items] of Object.entries(value)) {
        if (!Array.isArray(items)) throw new Error(`${key}.${speaker}: expected a list of [text, evidence dia_id(s)]`);
        items.forEach((item: unknown, i) => {
          const where = `${key}.${speaker}[${i}]`;
          if (!Array.isArray(item) || typeof item[0] !== 'string')
            throw new Error(`${where}: expected [text, evidence dia_id(s)], got ${JSON.stringify(item)}`);
          const ev: unknown = item[1];
          if (ev !== undefined && typeof ev !== 'string' && !(Array.isArray(ev) && ev.every((e) => typeof e === 'string'))) {
            throw new Error(`${where}: the evidence must be a dia_id or a list of them, got ${JSON.stringify(ev)}`);
          }
          observations.push({
            session,
            speaker,
            text: item[0],
            evidence: normaliseEvidence(ev === undefined ? [] : Array.isArray(ev) ? ev : [ev], known),
            day: date ? date.toISOString().slice(0, 10) : null,
          });
        });
      }
    }
  }
  // In session order; within a session, as listed (the sort is stable).
  observations.sort((x, y) => x.session - y.session);

  const qa = raw.qa ?? data.qa ?? [];
  if (!Array.isArray(qa)) throw new Error('qa: expected a list of {question, evidence, category}');
  const questions: Question[] = qa.map((q: unknown, i): Question => {
    if (!isObject(q) || typeof q.question !== 'string') throw new Error(`qa[${i}]: expected {question, evidence, category}, got ${JSON.stringify(q)}`);
    const category = typeof q.category === 'number' ? q.category : Number(q.category);
    if (!Number.isInteger(category)) throw new Error(`qa[${i}]: category must be a number 1–5 (got ${JSON.stringify(q.category)})`);
    const evidence = typeof q.evidence === 'string' ? [q.evidence] : q.evidence;
    return { category, question: q.question, evidence: normaliseEvidence(evidence, known) };
  });
  return { speakers: `${a} & ${b}`, observations, questions };
}

const pairsFile = path.resolve(values.pairs);
const offtopicFile = path.resolve(values.offtopic);
const dataDir = path.resolve(values.data);
const pairs = readPairs(pairsFile);
const offtopic = readOfftopic(offtopicFile);
const conversations: Conversation[] = [];
const skipped: string[] = [];
for (const file of locomoFiles(dataDir)) {
  try {
    conversations.push({ file, ...parseLocomo(JSON.parse(fs.readFileSync(path.join(dataDir, file), 'utf8'))) });
  } catch (err) {
    const reason = err instanceof SyntaxError ? `not JSON (${err.message})` : (err as Error).message;
    console.warn(`skipped ${file}: ${reason}`);
    skipped.push(file);
  }
}
if (conversations.length === 0) fail(`--data: no file in ${dataDir} is a LoCoMo conversation`);
const holdout = new Set(
  (values.holdout ?? '')
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean),
);
for (const f of holdout) {
  if (!conversations.some((c) => c.file === f))
    fail(`--holdout: ${f} is not one of the LoCoMo files read from ${dataDir} (${conversations.map((c) => c.file).join(', ')})`);
}
if (holdout.size && holdout.size === conversations.length) fail('--holdout: every file is held out; leave at least one to compare with');

// ---- the stores ----

const t0 = performance.now();
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-bench-memory-'));
let folders = 0;
const newFolder = () => {
  const dir = path.join(scratch, String(++folders));
  fs.mkdirSync(dir);
  return dir;
};
const openDatabases = new Set<Database>();
async function open(template?: Blob): Promise<Database> {
  const db = await openDatabase(newFolder(), template ? { template } : {});
  openDatabases.add(db);
  return db;
}
async function close(db: Database): Promise<void> {
  openDatabases.delete(db);
  await db.close();
}
const cleanUp = async () => {
  for (const db of openDatabases) await db.close().catch(() => {});
  fs.rmSync(scratch, { recursive: true, force: true });
};

const m = DEFAULT_MEMORY_SETTINGS;
let candidatesMs = 0;
/** How many memory hits --candidates keeps per run. */
const CANDIDATES_DEPTH = 40;
interface CandidateHit {
  id: number;
  score: number;
  coverage: number;
  shared: number;
  text: string;
  evidence: boolean;
}
/** --candidates: per file, each question's and off-topic message's first hits. */
const candidateDump: {
  file: string;
  questions: { question: string; category: number; hits: CandidateHit[] }[];
  offtopic: { message: string; hits: CandidateHit[] }[];
}[] = [];
/** The first CANDIDATES_DEPTH memory hits of the search passive recall runs, as the relevance rule sees them. */
async function candidatesOf(recall: Recall, query: string, excludeIds: number[], isEvidence: (id: number) => boolean): Promise<CandidateHit[]> {
  const start = performance.now();
  const hits = await recall.detailed({ query, sources: ['semantic'], limit: CANDIDATES_DEPTH, excludeMemoryIds: excludeIds, withCoverage: true });
  // Not part of the passive and off-topic times printed.
  candidatesMs += performance.now() - start;
  return hits.flatMap((d) => {
    if (d.hit.link.kind !== 'memory') return [];
    const id = d.hit.link.memoryId;
    return [{ id, score: d.hit.score, coverage: d.coverage ?? 0, shared: d.shared ?? 0, text: d.hit.text, evidence: isEvidence(id) }];
  });
}
/** Passive recall as a turn runs it (electron/agent/memory-turn.ts), with the default settings and no time limit. */
async function passive(recall: Recall, query: string, excludeIds: number[]) {
  const start = performance.now();
  const result = await recall.passive({
    query,
    limit: m.passiveLimit,
    minScore: m.passiveMinScore,
    minRelativeScore: m.passiveMinRelativeScore,
    maxChars: m.passiveMaxChars,
    excludeIds,
    timeoutMs: 0,
  });
  return { memories: result.memories, ms: performance.now() - start };
}

interface PairResult {
  pair: Pair;
  merged: boolean | null;
  refused?: string;
}
interface FileResult {
  file: string;
  speakers: string;
  observations: number;
  refused: number;
  merged: { old: string; new: string }[];
  memories: number;
  questions: number;
  hits: number;
  injected: number;
  evidenceInjected: number;
  offtopicRuns: number;
  offtopicAny: number;
  offtopicInjected: number;
  writeMs: number;
  openMs: number;
}
interface CategoryScore {
  questions: number;
  hits: number;
  injected: number;
  evidenceInjected: number;
}

const pairResults: PairResult[] = [];
const fileResults: FileResult[] = [];
const byCategory = new Map<number, CategoryScore>();
const questionMs: number[] = [];
const offtopicMs: number[] = [];
/** Per off-topic message: the runs that injected, the memories injected, one example. */
const offtopicByMessage = offtopic.map((message) => ({ message, any: 0, injected: 0, example: '' }));
let templateMs = 0;
let pairsMs = 0;
let passiveMs = 0;
let offtopicTotalMs = 0;

try {
  // The migrated template every new data folder starts from; its own database serves the pairs.
  let start = performance.now();
  const pairsDb = await open();
  const template = await dumpTemplate(pairsDb);
  templateMs = performance.now() - start;

  // ---- pairs ----
  start = performance.now();
  for (const pair of pairs) {
    let db = pairsDb;
    if (pairDb === 'fresh') db = await open(template);
    else await db.exec('DELETE FROM memory_changes; DELETE FROM memory_references; DELETE FROM memories;');
    const store = new MemoryStore(db);
    try {
      const first = await store.create({ type: pair.type, content: pair.a, source: 'user', actor: 'person' });
      const second = await store.create({ type: pair.type, content: pair.b, source: 'user', actor: 'person' });
      pairResults.push({ pair, merged: second.outcome === 'updated' && second.memory.id === first.memory.id });
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      // A guard refused one of the two (an opinion that does not say whose, a secret): not measurable.
      pairResults.push({ pair, merged: null, refused: err.message });
    }
    if (db !== pairsDb) await close(db);
  }
  await close(pairsDb);
  pairsMs = performance.now() - start;

  // ---- per conversation: observations, then passive recall on them ----
  for (const c of conversations) {
    start = performance.now();
    const db = await open(template);
    const store = new MemoryStore(db);
    const recall = new Recall({ db });
    const openMs = performance.now() - start;
    const r: FileResult = {
      file: c.file,
      speakers: c.speakers,
      observations: 0,
      refused: 0,
      merged: [],
      memories: 0,
      questions: 0,
      hits: 0,
      injected: 0,
      evidenceInjected: 0,
      offtopicRuns: 0,
      offtopicAny: 0,
      offtopicInjected: 0,
      writeMs: 0,
      openMs,
    };
    // The dia_ids each memory stands for: a merge adds the new observation's to the memory it updated.
    const evidenceOf = new Map<number, Set<string>>();
    const contentOf = new Map<number, string>();
    const observed = new Set<string>();
    const record = (o: Observation, saved: SaveMemoryResult) => {
      r.observations++;
      for (const e of o.evidence) observed.add(e);
      const id = saved.memory.id;
      const was = contentOf.get(id);
      if (saved.outcome === 'updated' && was !== undefined) r.merged.push({ old: was, new: o.text.trim() });
      contentOf.set(id, saved.memory.content);
      const set = evidenceOf.get(id) ?? new Set<string>();
      for (const e of o.evidence) set.add(e);
      evidenceOf.set(id, set);
    };
    const writeOf = (o: Observation): MemoryWrite => ({
      type: 'world',
      content: o.text,
      source: 'light-sleep',
      actor: 'light-sleep',
      validFrom: null,
      validTo: null,
      reason: `light sleep of ${o.day ?? `session ${o.session}`}`,
    });
    start = performance.now();
    if (observationWrites === 'create') {
      for (const o of c.observations) {
        try {
          record(o, await store.create(writeOf(o)));
        } catch (err) {
          if (!(err instanceof ApiError)) throw err;
          r.refused++;
        }
      }
    } else {
      // As light sleep writes one call's answer: probes ahead, then one batch (electron/sleep/steps/light-sleep.ts).
      const sessions = [...new Set(c.observations.map((o) => o.session))];
      for (const session of sessions) {
        const list = c.observations.filter((o) => o.session === session);
        const prepared = await store.prepareCreates(list.map(writeOf));
        await store.batch(async (b) => {
          for (const [i, item] of prepared.items.entries()) {
            if (item instanceof ApiError) r.refused++;
            else record(list[i]!, await b.createPrepared(item));
          }
        }, prepared);
      }
    }
    r.writeMs = performance.now() - start;
    r.memories = contentOf.size;

    const excludeIds = m.passiveExcludeResident ? (await buildResident(db, { topN: m.residentTopN })).ids : [];
    await recall.warm(['semantic']);
    const dumped = values.candidates !== undefined;
    const dumpedQuestions: { question: string; category: number; hits: CandidateHit[] }[] = [];
    const dumpedOfftopic: { message: string; hits: CandidateHit[] }[] = [];
    start = performance.now();
    for (const q of c.questions) {
      if (q.category < 1 || q.category > 4 || !q.evidence.some((e) => observed.has(e))) continue;
      const result = await passive(recall, q.question, excludeIds);
      questionMs.push(result.ms);
      const wanted = new Set(q.evidence);
      const isEvidence = (id: number) => [...(evidenceOf.get(id) ?? [])].some((e) => wanted.has(e));
      const evidence = result.memories.filter((x) => isEvidence(x.id)).length;
      if (dumped) dumpedQuestions.push({ question: q.question, category: q.category, hits: await candidatesOf(recall, q.question, excludeIds, isEvidence) });
      let cat = byCategory.get(q.category);
      if (!cat) byCategory.set(q.category, (cat = { questions: 0, hits: 0, injected: 0, evidenceInjected: 0 }));
      for (const s of [r, cat]) {
        s.questions++;
        s.injected += result.memories.length;
        s.evidenceInjected += evidence;
        if (evidence > 0) s.hits++;
      }
    }
    passiveMs += performance.now() - start - candidatesMs;
    candidatesMs = 0;

    // An empty store injects nothing by construction: only stores with memories count as runs.
    start = performance.now();
    if (r.memories > 0) {
      for (const [i, message] of offtopic.entries()) {
        const result = await passive(recall, message, excludeIds);
        offtopicMs.push(result.ms);
        if (dumped) dumpedOfftopic.push({ message, hits: await candidatesOf(recall, message, excludeIds, () => false) });
        r.offtopicRuns++;
        r.offtopicInjected += result.memories.length;
        const row = offtopicByMessage[i]!;
        row.injected += result.memories.length;
        if (result.memories.length > 0) {
          r.offtopicAny++;
          row.any++;
          row.example ||= `${c.file}: ${result.memories[0]!.content}`;
        }
      }
    }
    offtopicTotalMs += performance.now() - start - candidatesMs;
    candidatesMs = 0;
    if (dumped) candidateDump.push({ file: c.file, questions: dumpedQuestions, offtopic: dumpedOfftopic });
    await close(db);
    fileResults.push(r);
  }
} catch (err) {
  await cleanUp();
  throw err;
}
await cleanUp();
const totalMs = performance.now() - t0;

// ---- results ----

const measured = pairResults.filter((p) => p.merged !== null);
const wrongMerges = measured.filter((p) => !p.pair.same && p.merged);
const missed = measured.filter((p) => p.pair.same && !p.merged);
const sum = (f: (r: FileResult) => number) => fileResults.reduce((n, r) => n + f(r), 0);
const observations = sum((r) => r.observations);
const merged = sum((r) => r.merged.length);
const questions = sum((r) => r.questions);
const hits = sum((r) => r.hits);
const injected = sum((r) => r.injected);
const evidenceInjected = sum((r) => r.evidenceInjected);
const runs = sum((r) => r.offtopicRuns);
const anyRuns = sum((r) => r.offtopicAny);
const offtopicInjected = sum((r) => r.offtopicInjected);
const ratio = (a: number, b: number) => (b > 0 ? a / b : 0);
const stores = fileResults.filter((r) => r.offtopicRuns > 0).length;

const result = {
  pairs: { pairs: measured.length, wrong_merges: wrongMerges.length, missed_duplicates: missed.length },
  observations: { observations, merged },
  passive: {
    questions,
    hit_rate: round(ratio(hits, questions), 4),
    injected_per_question: round(ratio(injected, questions), 4),
    precision: round(ratio(evidenceInjected, injected), 4),
  },
  offtopic: { messages: offtopic.length, any_rate: round(ratio(anyRuns, runs), 4), injected_per_message: round(ratio(offtopicInjected, runs), 4) },
};

const CATEGORY_NAMES: Record<number, string> = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop' };
const num = (n: number, digits = 3) => n.toFixed(digits);
const shown = (file: string) => (path.relative(process.cwd(), file).startsWith('..') ? file : path.relative(process.cwd(), file));
const clip = (s: string, n = 110) => {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length <= n ? flat : `${flat.slice(0, n - 1)}…`;
};

console.log(
  `\nMemory write and passive recall — ${pairs.length} pairs (${path.basename(pairsFile)}), ${fileResults.length} LoCoMo file(s)` +
    (skipped.length ? ` (${skipped.length} skipped)` : '') +
    `, ${offtopic.length} off-topic messages (${path.basename(offtopicFile)})`,
);
console.log(
  `pairs: ${pairDb === 'reset' ? 'one database, its memory tables emptied between pairs' : 'a fresh data folder per pair'}; ` +
    `observations: ${observationWrites === 'create' ? 'MemoryStore.create, one at a time' : 'prepareCreates + one batch per session, as light sleep'}; ` +
    `passive: limit ${m.passiveLimit}, minScore ${m.passiveMinScore}, minRelativeScore ${m.passiveMinRelativeScore}, maxChars ${m.passiveMaxChars}, resident excluded: ${m.passiveExcludeResident}\n`,
);
const line = (section: string, key: string, value: string, note = '') =>
  console.log(`${section.padEnd(14)}${key.padEnd(24)}${value.padStart(8)}${note ? `   ${note}` : ''}`);
line(
  'pairs',
  'pairs',
  String(measured.length),
  pairResults.length > measured.length ? `(${pairResults.length - measured.length} refused by a guard, not counted)` : '',
);
line('', 'wrong_merges', String(wrongMerges.length), `of ${measured.filter((p) => !p.pair.same).length} that must stay apart`);
line('', 'missed_duplicates', String(missed.length), `of ${measured.filter((p) => p.pair.same).length} that must merge`);
line(
  'observations',
  'observations',
  String(observations),
  `saved; ${sum((r) => r.memories)} memories after merges` + (sum((r) => r.refused) ? `; ${sum((r) => r.refused)} refused by a guard` : ''),
);
line('', 'merged', String(merged), 'saves that updated an existing memory');
line('passive', 'questions', String(questions), 'cat 1–4 with evidence an observation has');
line('', 'hit_rate', num(result.passive.hit_rate), 'share with ≥ 1 evidence memory injected');
line('', 'injected_per_question', num(result.passive.injected_per_question, 2));
line('', 'precision', num(result.passive.precision), 'evidence memories ÷ injected memories');
line('offtopic', 'messages', String(offtopic.length), `× ${stores} stores = ${runs} runs`);
line('', 'any_rate', num(result.offtopic.any_rate), 'share of (message, store) runs injecting ≥ 1 memory');
line('', 'injected_per_message', num(result.offtopic.injected_per_message, 2), 'injected memories ÷ runs');
// The same, split by the message's script: Chinese messages rarely share a word with English memories.
const byScript = [true, false].map((han) => {
  const rows = offtopicByMessage.filter((x) => /\p{Script=Han}/u.test(x.message) === han);
  return `${han ? 'Chinese' : 'English (not Han)'} ${rows.length}: ${num(
    ratio(
      rows.reduce((n, x) => n + x.any, 0),
      rows.length * stores,
    ),
  )}`;
});
line('', 'any_rate by script', '', byScript.join(', '));

console.log(`\n${'passive by category'.padEnd(22)}${'questions'.padStart(10)}${'hit_rate'.padStart(10)}${'inj/q'.padStart(8)}${'precision'.padStart(11)}`);
for (const [c, s] of [...byCategory.entries()].sort((a, b) => a[0] - b[0])) {
  console.log(
    `${`${c} ${CATEGORY_NAMES[c] ?? ''}`.padEnd(22)}${String(s.questions).padStart(10)}${num(ratio(s.hits, s.questions)).padStart(10)}${num(ratio(s.injected, s.questions), 2).padStart(8)}${num(ratio(s.evidenceInjected, s.injected)).padStart(11)}`,
  );
}

const fileWidth = Math.max(6, ...fileResults.map((r) => r.file.length + 2));
console.log(
  `\n${'file'.padEnd(fileWidth)}${'speakers'.padEnd(22)}${'obs'.padStart(6)}${'merged'.padStart(8)}${'questions'.padStart(11)}${'hit_rate'.padStart(10)}${'precision'.padStart(11)}${'offtopic any'.padStart(14)}${'write ms'.padStart(10)}`,
);
for (const r of fileResults) {
  console.log(
    `${r.file.padEnd(fileWidth)}${clip(r.speakers, 21).padEnd(22)}${String(r.observations).padStart(6)}${String(r.merged.length).padStart(8)}${String(r.questions).padStart(11)}` +
      `${num(ratio(r.hits, r.questions)).padStart(10)}${num(ratio(r.evidenceInjected, r.injected)).padStart(11)}${num(ratio(r.offtopicAny, r.offtopicRuns)).padStart(14)}${r.writeMs.toFixed(0).padStart(10)}`,
  );
}

if (holdout.size) {
  console.log('');
  for (const [label, rows] of [
    ['held out', fileResults.filter((r) => holdout.has(r.file))],
    ['the rest', fileResults.filter((r) => !holdout.has(r.file))],
  ] as const) {
    const total = (f: (r: FileResult) => number) => rows.reduce((n, r) => n + f(r), 0);
    const [q, hit, inj, ev] = [total((r) => r.questions), total((r) => r.hits), total((r) => r.injected), total((r) => r.evidenceInjected)];
    const off = ratio(
      total((r) => r.offtopicAny),
      total((r) => r.offtopicRuns),
    );
    const files = rows.map((r) => r.file).join(', ');
    console.log(
      `${label} (${files}): questions ${q}, hit_rate ${num(ratio(hit, q))}, precision ${num(ratio(ev, inj))}, ` +
        `injected_per_question ${num(ratio(inj, q), 2)}, off-topic any_rate ${num(off)}`,
    );
  }
}

const wrong = [...wrongMerges, ...missed];
if (wrong.length) {
  console.log('\npairs scored wrong:');
  for (const p of wrong)
    console.log(
      `  ${p.pair.same ? 'missed duplicate' : 'wrong merge     '}  [${p.pair.why || 'no why'}]  ${JSON.stringify(p.pair.a)} / ${JSON.stringify(p.pair.b)}`,
    );
}
const refused = pairResults.filter((x) => x.refused);
if (refused.length) console.log('\npairs not measured (a guard refused a save):');
for (const p of refused) console.log(`  refused pair [${p.pair.why || 'no why'}] ${JSON.stringify(p.pair.a)} / ${JSON.stringify(p.pair.b)}: ${p.refused}`);
if (merged) {
  console.log('\nobservations merged (old text ← new text):');
  for (const r of fileResults) for (const x of r.merged) console.log(`  ${r.file}: ${clip(x.old, 90)}  ←  ${clip(x.new, 90)}`);
}
const noisy = offtopicByMessage.filter((x) => x.any > 0).sort((a, b) => b.any - a.any || b.injected - a.injected);
if (noisy.length) {
  console.log(`\noff-topic messages that injected (stores injecting / ${stores}, memories injected, the first one):`);
  for (const x of noisy)
    console.log(`  ${String(x.any).padStart(2)}  ${String(x.injected).padStart(3)}  ${clip(JSON.stringify(x.message), 50).padEnd(52)} ${clip(x.example, 90)}`);
}

const p = (ms: number[], q: number) => (ms.length ? percentile(ms, q).toFixed(2) : '—');
const slow = [...questionMs, ...offtopicMs].filter((ms) => ms > DEFAULT_PASSIVE_TIMEOUT_MS).length;
console.log(
  `\npassive recall ms a run: questions p50 ${p(questionMs, 50)}, p95 ${p(questionMs, 95)}; off-topic p50 ${p(offtopicMs, 50)}, p95 ${p(offtopicMs, 95)}` +
    (slow ? `; ${slow} run(s) over the app's ${DEFAULT_PASSIVE_TIMEOUT_MS} ms limit (the app would inject nothing there)` : ''),
);
console.log(
  `times: template ${templateMs.toFixed(0)} ms, pairs ${pairsMs.toFixed(0)} ms, stores opened ${sum((r) => r.openMs).toFixed(0)} ms, observations written ${sum((r) => r.writeMs).toFixed(0)} ms ` +
    `(${observations ? (sum((r) => r.writeMs) / observations).toFixed(2) : 0} ms a save), passive ${passiveMs.toFixed(0)} ms, off-topic ${offtopicTotalMs.toFixed(0)} ms; total ${totalMs.toFixed(0)} ms`,
);
console.log(JSON.stringify(result));

if (values.json) {
  const file = path.resolve(values.json);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`written to ${shown(file)}`);
}
if (values.candidates) {
  const file = path.resolve(values.candidates);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify({ depth: CANDIDATES_DEPTH, limit: m.passiveLimit, minRelativeScore: m.passiveMinRelativeScore, files: candidateDump }));
  console.log(`candidates written to ${shown(file)}`);
}
if (measured.length === 0 && observations === 0) {
  console.error('No pair and no observation could be saved: nothing was measured.');
  process.exit(1);
}
