// Part 2: the bridge fuzzer. Every API method's payloads are derived from its zod schema in
// shared/api/*.ts (walked, not hand-listed): a valid payload, then wrong types, missing and extra
// fields, and hostile-but-valid values (NUL, lone surrogates, RTL marks, 1 MB strings, extreme
// dates and numbers, negative and huge ids), sent to the running app with the token. No answer may
// be a 5xx (or no answer at all), and a refused request (4xx) must change no data: a snapshot of the
// list endpoints is compared before and after each one.
import { createHash } from 'node:crypto';
import type { z } from 'zod';
import { startFakeLlm } from '../../e2e/fake-llm/server.js';
import { inputs, type ApiMethod } from '../../shared/api.js';
import { MAX_BODY_BYTES } from '../../shared/api/transport.js';
import { call, configure, must, newDataDir, random, spawnApp, type AppEndpoint, type Entry } from './harness.js';

/**
 * Known findings, not fixed yet: cases named here still run, but their 5xx answers are counted as
 * knownServerErrors (and listed) instead of failing the run. Remove an entry when its fix lands.
 */
export const KNOWN_FINDINGS: Record<string, string> = {};

export interface FuzzOptions {
  requests: number;
  entry: Entry;
  seed?: number;
  log?: (line: string) => void;
}

export interface FuzzReport {
  requests: number;
  seed: number;
  methodsFuzzed: number;
  /** Distinct payloads derived from the schemas (a run of more requests repeats them at random). */
  casesDerived: number;
  skipped: Record<string, string>;
  byStatus: Record<string, number>;
  accepted: number;
  refused: number;
  /** 5xx answers: must be 0. */
  serverErrors: number;
  /** 5xx answers to cases of a known, unfixed finding (KNOWN_FINDINGS). */
  knownServerErrors: number;
  knownFindings: Record<string, string>;
  /** No answer (a dropped connection or a timeout): must be 0. */
  noAnswer: number;
  /** Refused requests after which the data snapshot differed: must be 0. */
  refusedButChanged: number;
  problems: string[];
  elapsedS: number;
}

/** Methods not sent a valid payload, and why (their invalid payloads are still sent: a refusal runs nothing). */
export const SKIPPED_VALID: Partial<Record<ApiMethod, string>> = {
  'models.download': 'downloads from the internet (the Hugging Face hub); the suite stays on loopback',
  'models.useForEmbeddings': 'a valid id loads (and may download) an on-device model',
  'models.delete': 'removes downloaded model files',
  'providers.detect': 'probes well-known local ports for model servers of this machine',
  'providers.test': 'sends a request to whatever URL the payload names (a fuzzed one is not loopback)',
  'providers.save': 'a valid save with a fuzzed URL would point later model calls off loopback',
  'providers.delete': "removes the fake model's connection the other calls need",
  'sleep.now': 'starts a night of background model calls (minutes); the kill loop and stream corpus run it',
  'app.resetBrowserLink': "gives the folder's link a new token: every later call with the suite's token would be refused",
};

/** Fuzzed last, because a valid payload changes what the other calls see. */
const LAST: ApiMethod[] = ['settings.update'];

type Schema = z.ZodType & {
  _zod: { def: any };
  minLength?: number | null;
  maxLength?: number | null;
  minValue?: number | null;
  maxValue?: number | null;
  isInt?: boolean;
};

const MB = 'x'.repeat(1024 * 1024);
const HOSTILE_STRINGS = [
  'hello\u0000world',
  '\u0000',
  'a\ud800b',
  '\udfff',
  '\u202eevil\u202c \u200f\u200e',
  '\u2066isolate\u2069',
  '\ufeffbom',
  '🙂🧠'.repeat(50),
  ' ',
  '',
  '../../../../etc/passwd',
  "'; DROP TABLE memories; --",
  '<script>alert(1)</script>',
  '%00%ff',
  '\\u0000',
  MB,
  'y'.repeat(200_001),
];
const HOSTILE_DATES = [
  '10000-01-01',
  '+275760-09-13T00:00:00.000Z',
  '-000001-01-01',
  '0000-01-01',
  '0001-01-01',
  '9999-12-31',
  '9999-12-31T23:59:59.999Z',
  '2024-02-30',
  '1',
  '0',
  'now',
  '2024-13-01',
  '1970-01-01T00:00:00Z',
];
const HOSTILE_NUMBERS = [
  -1,
  0,
  0.5,
  -0.0,
  2 ** 31,
  2 ** 31 - 1,
  -(2 ** 31) - 1,
  2 ** 53,
  Number.MAX_SAFE_INTEGER + 2,
  -Number.MAX_SAFE_INTEGER,
  1e308,
  -1e308,
  1e-300,
];
const WRONG_TYPES: unknown[] = [null, 0, 1.5, 'text', true, [], {}, [1, 'a'], { nested: { deeper: [null] } }];
const VALID_STRINGS = ['hello there', '2024-05-01', '2024-05-01T10:00:00.000Z', '23:00', 'UTC', 'org/name', 'x'];

function kindOf(s: Schema): string {
  return s._zod.def.type as string;
}

/** A value the schema accepts (best effort: one of a few candidates). */
function validValue(s: Schema, field: string, ids: Ids): unknown {
  switch (kindOf(s)) {
    case 'optional':
    case 'default':
      return validValue(s._zod.def.innerType, field, ids);
    case 'nullable':
      return validValue(s._zod.def.innerType, field, ids);
    case 'object':
      return validObject(s, ids);
    case 'string': {
      const known = ids.forField(field);
      if (typeof known === 'string' && s.safeParse(known).success) return known;
      for (const candidate of VALID_STRINGS) if (s.safeParse(candidate).success) return candidate;
      return 'x'.repeat(Math.max(1, s.minLength ?? 1));
    }
    case 'number': {
      const known = ids.forField(field);
      if (typeof known === 'number' && s.safeParse(known).success) return known;
      return Math.max(s.minValue ?? 1, 1);
    }
    case 'boolean':
      return false;
    case 'enum':
      return Object.values(s._zod.def.entries)[0];
    case 'literal':
      return s._zod.def.values[0];
    case 'array':
      return [];
    default:
      return undefined;
  }
}

function validObject(s: Schema, ids: Ids): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(s._zod.def.shape as Record<string, Schema>)) {
    if (kindOf(field) === 'optional') continue;
    out[key] = validValue(field, key, ids);
  }
  return out;
}

/** The values worth trying in place of a field of this schema. */
function hostileValues(s: Schema, field: string, ids: Ids): unknown[] {
  const inner = ['optional', 'nullable', 'default'].includes(kindOf(s)) ? unwrap(s) : s;
  const values: unknown[] = [...WRONG_TYPES];
  switch (kindOf(inner)) {
    case 'string': {
      values.push(...HOSTILE_STRINGS, ...HOSTILE_DATES);
      const max = inner.maxLength;
      if (typeof max === 'number' && max < 1_000_000) values.push('z'.repeat(max), 'z'.repeat(max + 1));
      const valid = validValue(inner, field, ids);
      if (typeof valid === 'string') values.push(`${valid}\u0000`, `\u202e${valid}`, `${valid}\ud800`);
      values.push('-1', '0', 'f'.repeat(64), 'f'.repeat(65));
      break;
    }
    case 'number':
      values.push(...HOSTILE_NUMBERS);
      if (typeof inner.maxValue === 'number' && Number.isFinite(inner.maxValue)) values.push(inner.maxValue, inner.maxValue + 1);
      break;
    case 'enum':
      values.push('nope', '', 'WORLD', ...Object.values(inner._zod.def.entries).map((v) => `${String(v)}\u0000`));
      break;
    case 'array': {
      const element = validValue(inner._zod.def.element, field, ids);
      values.push(Array(1000).fill(element), Array(30).fill(element), [element, null], [[element]], Array(5).fill('\u0000'));
      break;
    }
    case 'object':
      values.push({ ...validObject(inner, ids), extra: 1 }, {});
      break;
    case 'boolean':
      values.push('true', 1, 'false');
      break;
  }
  return values;
}

function unwrap(s: Schema): Schema {
  let inner = s;
  while (['optional', 'nullable', 'default'].includes(kindOf(inner))) inner = inner._zod.def.innerType;
  return inner;
}

interface Case {
  method: string;
  what: string;
  input?: unknown;
  raw?: string;
  /** Valid payloads of SKIPPED_VALID methods are not sent. */
}

interface Ids {
  forField(field: string): unknown;
}

function casesFor(method: ApiMethod, ids: Ids): Case[] {
  const schema = inputs[method] as unknown as Schema;
  const cases: Case[] = [];
  const base = kindOf(schema) === 'object' ? validObject(schema, ids) : {};
  if (!SKIPPED_VALID[method]) cases.push({ method, what: 'valid', input: base });
  for (const body of WRONG_TYPES)
    if (!(typeof body === 'object' && body !== null && !Array.isArray(body) && Object.keys(body).length === 0))
      cases.push({ method, what: `body ${JSON.stringify(body)}`, input: body });
  cases.push({ method, what: 'extra field', input: { ...base, notAField: 'x' } });
  cases.push({ method, what: '__proto__', raw: `{"__proto__":{"polluted":true},${JSON.stringify(base).slice(1)}`.replace(',}', '}') });
  cases.push({ method, what: 'invalid JSON', raw: '{"a":' });
  cases.push({ method, what: 'deep nesting', raw: `${'['.repeat(50_000)}${']'.repeat(50_000)}` });
  cases.push({ method, what: 'invalid UTF-8', raw: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]).toString('latin1') });
  if (kindOf(schema) !== 'object') return cases;
  for (const [key, field] of Object.entries(schema._zod.def.shape as Record<string, Schema>)) {
    if (kindOf(field) !== 'optional' && kindOf(field) !== 'default') cases.push({ method, what: `missing ${key}`, input: omit(base, key) });
    for (const value of hostileValues(field, key, ids)) {
      const input = { ...base, [key]: value };
      const valid = (schema as z.ZodType).safeParse(input).success;
      if (valid && SKIPPED_VALID[method]) continue;
      const shown = typeof value === 'string' && value.length > 40 ? `<${value.length} chars>` : JSON.stringify(value)?.slice(0, 60);
      cases.push({ method, what: `${key}=${shown}`, input });
    }
  }
  return cases;
}

function omit(o: Record<string, unknown>, key: string): Record<string, unknown> {
  const { [key]: _dropped, ...rest } = o;
  return rest;
}

/** What the data looks like from outside: a hash per list endpoint. */
async function snapshot(app: AppEndpoint): Promise<Record<string, string>> {
  const reads: [string, unknown][] = [
    ['conversations.list', {}],
    ['conversations.list', { archived: true }],
    ['memories.list', { limit: 200, statuses: ['active', 'superseded', 'expired'] }],
    ['self.list', {}],
    ['settings.get', {}],
    ['providers.list', {}],
    ['graph.view', {}],
    ['diary.days', {}],
    ['sleep.runs', {}],
  ];
  const results = await Promise.all(reads.map(([m, i]) => call(app, m, i)));
  return Object.fromEntries(
    results.map((r, i) => [`${reads[i]![0]} ${JSON.stringify(reads[i]![1])}`, createHash('sha256').update(JSON.stringify(r.body)).digest('hex').slice(0, 16)]),
  );
}

const same = (a: Record<string, string>, b: Record<string, string>) => Object.keys(a).filter((k) => a[k] !== b[k]);

/** Snapshots until two in a row agree (accepted writes may start background work, e.g. the graph indexer). */
async function settled(app: AppEndpoint): Promise<Record<string, string>> {
  let last = await snapshot(app);
  for (let i = 0; i < 20; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const next = await snapshot(app);
    if (same(last, next).length === 0) return next;
    last = next;
  }
  return last;
}

export async function runFuzz(opts: FuzzOptions): Promise<FuzzReport> {
  const seed = opts.seed ?? Date.now() & 0x7fffffff;
  const rng = random(seed);
  const log = opts.log ?? (() => {});
  const started = Date.now();
  const fake = await startFakeLlm({ defaultChunkDelayMs: 0 });
  const proc = spawnApp(newDataDir('anima-rel-fuzz-'), opts.entry);
  const report: FuzzReport = {
    requests: 0,
    seed,
    methodsFuzzed: 0,
    casesDerived: 0,
    skipped: { ...SKIPPED_VALID } as Record<string, string>,
    byStatus: {},
    accepted: 0,
    refused: 0,
    serverErrors: 0,
    knownServerErrors: 0,
    knownFindings: KNOWN_FINDINGS,
    noAnswer: 0,
    refusedButChanged: 0,
    problems: [],
    elapsedS: 0,
  };
  const problem = (text: string) => {
    if (report.problems.length < 100) report.problems.push(text);
    log(`  problem: ${text}`);
  };
  try {
    const app = await proc.ready;
    await configure(app, fake.baseUrl);
    // Something for ids to point at.
    const conversation = await must(app, 'conversations.create', { title: 'fuzz' });
    const memory = (await must(app, 'memories.create', { type: 'preference', content: 'Mara likes green tea in the morning' })).memory;
    await must(app, 'chat.send', { conversationId: conversation.id, content: 'Mara met Jon in Lisbon' });
    const ids: Ids = {
      forField(field) {
        if (field === 'conversationId' || field === 'id') return field === 'id' ? undefined : conversation.id;
        return undefined;
      },
    };
    const idsFor = (method: string): Ids => ({
      forField(field) {
        if (field === 'conversationId') return conversation.id;
        if (field === 'id' && (method.startsWith('conversations.') || method.startsWith('chat.'))) return conversation.id;
        if (field === 'id' && method.startsWith('memories.')) return memory.id;
        if (field === 'timeZone') return 'UTC';
        return ids.forField(field);
      },
    });

    const methods = (Object.keys(inputs) as ApiMethod[]).sort((a, b) => Number(LAST.includes(a)) - Number(LAST.includes(b)));
    const all: Case[] = [];
    for (const method of methods) all.push(...casesFor(method, idsFor(method)));
    report.methodsFuzzed = methods.length;
    report.casesDerived = all.length;
    // The full list first (in method order, settings last), then random repeats until the count is reached.
    const plan =
      all.length >= opts.requests
        ? pickSpread(all, opts.requests)
        : [...all, ...Array.from({ length: opts.requests - all.length }, () => rng.pick(all.filter((c) => !LAST.includes(c.method as ApiMethod))))];
    // Keep settings.update last even with repeats.
    plan.sort((a, b) => Number(LAST.includes(a.method as ApiMethod)) - Number(LAST.includes(b.method as ApiMethod)));

    let before = await settled(app);
    for (const c of plan) {
      const sent = await call(app, c.method, c.input, { raw: c.raw, timeoutMs: 60_000 });
      // A body over the limit is refused by a 413 and a closed connection before it is read: a client
      // still writing it may see the close (EPIPE, ECONNRESET) before the 413. That is the refusal.
      const r = sent.status === 0 && bodyBytes(c) > MAX_BODY_BYTES && /EPIPE|ECONNRESET/.test(String(sent.body)) ? { status: 413, body: sent.body } : sent;
      report.requests++;
      report.byStatus[r.status] = (report.byStatus[r.status] ?? 0) + 1;
      if (r.status === 0) {
        report.noAnswer++;
        problem(`${c.method} ${c.what}: no answer (${String(r.body).slice(0, 120)})`);
        if (proc.child.exitCode !== null || proc.child.signalCode !== null) throw new Error(`the app exited after ${c.method} ${c.what}`);
        before = await settled(app);
      } else if (r.status >= 500 && KNOWN_FINDINGS[c.what]) {
        report.knownServerErrors++;
        before = await settled(app);
      } else if (r.status >= 500) {
        report.serverErrors++;
        problem(`${c.method} ${c.what}: ${r.status} ${JSON.stringify(r.body).slice(0, 160)}`);
        before = await settled(app);
      } else if (r.status >= 400) {
        report.refused++;
        const after = await snapshot(app);
        const changed = same(before, after);
        if (changed.length > 0) {
          // Background work of an earlier accepted call can still be landing: look again once settled.
          const again = await settled(app);
          report.refusedButChanged++;
          problem(`${c.method} ${c.what}: refused with ${r.status} but ${changed.join(', ')} changed`);
          before = again;
        }
      } else {
        report.accepted++;
        before = await settled(app);
      }
      if (report.requests % 100 === 0)
        log(`fuzz ${report.requests}/${plan.length}: ${report.serverErrors} 5xx, ${report.refusedButChanged} changed on refusal`);
    }
    // Still alive and answering.
    await must(app, 'app.info');
  } catch (err) {
    const exited = proc.child.exitCode !== null || proc.child.signalCode !== null;
    throw new Error(
      `${(err as Error).message}\n(the app ${exited ? `exited (${proc.child.signalCode ?? proc.child.exitCode})` : 'is still running'}; its output:\n${proc.output().slice(-3000)})`,
    );
  } finally {
    await proc.stop();
    await fake.close();
    report.elapsedS = Math.round((Date.now() - started) / 1000);
  }
  return report;
}

/** n cases spread over the whole list, so a short run still touches every method. */
function pickSpread<T>(list: T[], n: number): T[] {
  return Array.from({ length: n }, (_, i) => list[Math.floor((i * list.length) / n)]!);
}

/** The size of the body `call` sends for a case (raw text is sent byte for byte, the input as UTF-8 JSON). */
function bodyBytes(c: Case): number {
  return c.raw !== undefined ? Buffer.byteLength(c.raw, 'latin1') : Buffer.byteLength(c.input === undefined ? '' : JSON.stringify(c.input), 'utf8');
}
