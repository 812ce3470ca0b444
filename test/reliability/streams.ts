// Part 3: the malformed-stream corpus. The fake model answers with what a broken or hostile server
// sends — cut JSON, invalid UTF-8, NUL deltas, keep-alive floods, a 20 MB delta, an endless stream,
// a 200 with an error body, an HTML page, broken tool arguments — to chat and to the sleep cycle's
// background calls. Chat: the reply must end `partial` or `error` with words (never `streaming`,
// never an empty `complete`; cases whose bytes still carry a usable reply may end `complete` with
// text). Background: the night must end, each bad answer audited as `error`/`invalid` with words.
// After every case the app must answer the next call (and the next chat must complete).
import { findTask } from '../../e2e/fake-llm/sleep-responder.js';
import { startFakeLlm, type FakeResponse } from '../../e2e/fake-llm/server.js';
import { call, configure, must, newDataDir, spawnApp, waitFor, type AppEndpoint, type Entry } from './harness.js';

export interface StreamCase {
  name: string;
  response: FakeResponse;
  /** The bytes still carry a reply (sanitised): `complete` with text is a right ending too. */
  allowComplete?: boolean;
  /** Takes minutes (a keep-alive flood ends at twice the model timeout): left out of quick runs. */
  slow?: boolean;
  /** Only the turn's first request gets it (else every request of the turn does: retries, tool rounds). */
  once?: boolean;
}

const chunk = (content: string) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'fake-model', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
const opening = `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'fake-model', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] })}\n\n`;
const finish = `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'fake-model', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`;
const toolDelta = (args: string, finishReason: string | null = null) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'fake-model', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'remember', arguments: args } }] }, finish_reason: finishReason }] })}\n\n`;

export const STREAM_CASES: StreamCase[] = [
  {
    name: 'cut JSON, then the end',
    response: { kind: 'raw', writes: [opening, chunk('Hello there'), 'data: {"id":"c1","choices":[{"index":0,"delta":{"content":"and th'] },
  },
  {
    name: 'cut JSON, then a dropped connection',
    response: { kind: 'raw', writes: [opening, chunk('Hello there'), 'data: {"id":"c1","choices":[{"delta":{"con'], end: false },
  },
  { name: 'cut text (no terminator)', response: { kind: 'cut', text: 'A reply that stops in the middle of a' } },
  {
    name: 'invalid UTF-8 inside a delta',
    response: {
      kind: 'raw',
      writes: [
        opening,
        Buffer.concat([
          Buffer.from('data: {"id":"c1","choices":[{"index":0,"delta":{"content":"bad '),
          Buffer.from([0xff, 0xfe, 0xc3]),
          Buffer.from(' bytes"},"finish_reason":null}]}\n\n'),
        ]),
        finish,
      ],
    },
    allowComplete: true,
  },
  {
    name: 'NUL deltas',
    response: { kind: 'raw', writes: [opening, chunk('before\u0000after'), chunk('\u0000'), chunk(' a\ud800b'), finish] },
    allowComplete: true,
  },
  { name: 'only [DONE]', response: { kind: 'raw', writes: ['data: [DONE]\n\n'] } },
  { name: 'empty 200 event stream', response: { kind: 'raw', writes: [] } },
  { name: 'garbage lines', response: { kind: 'raw', writes: ['this is not an event stream\n\n', 'data: {not json}\n\n', 'data: [1,2,3]\n\n'] } },
  {
    name: '200 with an error body (insufficient_quota)',
    response: {
      kind: 'raw',
      contentType: 'application/json',
      writes: [
        JSON.stringify({
          error: {
            message: 'You exceeded your current quota, please check your plan and billing details.',
            type: 'insufficient_quota',
            param: null,
            code: 'insufficient_quota',
          },
        }),
      ],
    },
  },
  {
    name: '200 with an HTML page',
    response: {
      kind: 'raw',
      contentType: 'text/html; charset=utf-8',
      writes: ['<!doctype html><html><head><title>Captive portal login</title></head><body><h1>Sign in to the Wi-Fi</h1></body></html>'],
    },
  },
  {
    name: '502 HTML page',
    response: { kind: 'raw', status: 502, contentType: 'text/html', writes: ['<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>'] },
  },
  {
    name: 'an error event mid-stream',
    response: {
      kind: 'raw',
      writes: [opening, chunk('Starting'), `data: ${JSON.stringify({ error: { message: 'The server is overloaded', type: 'server_error' } })}\n\n`],
    },
  },
  { name: 'a 20 MB delta', response: { kind: 'raw', writes: [opening, chunk('w'.repeat(20 * 1024 * 1024)), finish] } },
  {
    name: 'an endless stream',
    response: { kind: 'endless', text: 'and on and on '.repeat(200), everyMs: 0 },
    // Ends at the 1,000,000-character bound in seconds; while the reply is saved every 250 ms an index that
    // re-reads the whole text on each save made it take minutes once (waited for up to 3 minutes).
  },
  {
    name: 'broken tool arguments',
    response: {
      kind: 'raw',
      writes: [
        opening,
        toolDelta('{"content": "Mara likes'),
        toolDelta(' tea", "type": '),
        `data: ${JSON.stringify({ id: 'c1', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] })}\n\n`,
        'data: [DONE]\n\n',
      ],
    },
    allowComplete: true,
    once: true,
  },
  { name: 'a keep-alive flood', response: { kind: 'keepalive', everyMs: 1_000 }, slow: true },
];

export interface StreamReport {
  chatCases: number;
  chatPassed: number;
  backgroundCases: number;
  backgroundPassed: number;
  /** Cases after which the next call failed: must be 0. */
  appDead: number;
  results: { task: string; name: string; ok: boolean; ending: string; ms: number }[];
  problems: string[];
  elapsedS: number;
}

export async function runStreamCorpus(opts: {
  entry: Entry;
  quick?: boolean;
  cases?: string[];
  background?: boolean;
  log?: (line: string) => void;
}): Promise<StreamReport> {
  const log = opts.log ?? (() => {});
  const started = Date.now();
  const cases = STREAM_CASES.filter((c) => (!opts.quick || !c.slow) && (!opts.cases || opts.cases.includes(c.name)));
  const fake = await startFakeLlm({ defaultChunkDelayMs: 0 });
  const proc = spawnApp(newDataDir('anima-rel-streams-'), opts.entry);
  const report: StreamReport = { chatCases: 0, chatPassed: 0, backgroundCases: 0, backgroundPassed: 0, appDead: 0, results: [], problems: [], elapsedS: 0 };
  try {
    const app = await proc.ready;
    await configure(app, fake.baseUrl);
    let current: StreamCase | undefined;
    let servedFor = new Set<string>();
    // The case's answer goes to the request carrying its marker (chat) or to every sleep task, once per
    // conversation turn; a tool result's follow-up, a repair turn and anything else get the normal answers.
    fake.respond = (body) => {
      const text = JSON.stringify(body);
      if (current && text.includes('[case]') && !(current.once && servedFor.has('chat'))) {
        servedFor.add('chat');
        return current.response;
      }
      const task = findTask(body);
      if (current && task && text.includes('[night]')) return current.response;
      return undefined;
    };

    for (const c of cases) {
      current = c;
      servedFor = new Set();
      const t0 = Date.now();
      const conversation = await must(app, 'conversations.create', { title: `stream: ${c.name}` });
      const sent = await must(app, 'chat.send', { conversationId: conversation.id, content: `[case] ${c.name}: tell me about tea` });
      const replyId = sent.assistantMessage.id as string;
      const reply = await waitFor(
        `the reply to "${c.name}" to end`,
        async () => {
          const got = await call(app, 'conversations.get', { id: conversation.id });
          const m = got.status === 200 ? (got.body.messages as any[]).find((x) => x.id === replyId) : undefined;
          return m && m.status !== 'streaming' ? m : undefined;
        },
        c.slow ? 300_000 : 180_000,
        200,
      ).catch((err: Error) => ({ status: 'streaming', content: '', error: { message: err.message } }));
      const words = (reply.error?.message ?? '').trim() !== '' || (reply.content ?? '').trim() !== '';
      const ok = (reply.status === 'partial' || reply.status === 'error' || (!!c.allowComplete && reply.status === 'complete')) && words;
      const ending = `${reply.status}: ${(reply.error?.message ?? reply.content ?? '').slice(0, 140)}`;
      report.chatCases++;
      if (ok) report.chatPassed++;
      else report.problems.push(`chat, ${c.name}: ended ${ending}`);
      report.results.push({ task: 'chat', name: c.name, ok, ending, ms: Date.now() - t0 });
      log(`  chat / ${c.name}: ${ok ? 'ok' : 'FAIL'} (${ending.slice(0, 80)})`);
      current = undefined;
      if (!(await alive(app))) {
        report.appDead++;
        report.problems.push(`chat, ${c.name}: the app did not answer the next chat`);
      }
    }

    if (opts.background !== false) {
      // The sleep cycle's background calls (light sleep first; its later steps get the same answer).
      const conversation = await must(app, 'conversations.create', { title: 'night' });
      for (const text of ['[night] I started learning the cello in March.', '[night] My sister Lena lives in Porto and works as a nurse.']) {
        await must(app, 'chat.send', { conversationId: conversation.id, content: text });
        await waitFor(
          'the reply',
          async () => ((await must(app, 'conversations.get', { id: conversation.id })).messages as any[]).every((m) => m.status !== 'streaming') || undefined,
          60_000,
        );
      }
      for (const c of cases.filter((x) => !x.slow && x.response.kind !== 'cut')) {
        current = c;
        servedFor = new Set(['chat']);
        const t0 = Date.now();
        const lastAudit = ((await must(app, 'sleep.audit', { limit: 1 })).items as any[])[0]?.id ?? 0;
        const now = await call(app, 'sleep.now', {});
        if (now.status !== 200 || now.body.runId === null) {
          report.problems.push(`sleep, ${c.name}: sleep.now answered ${now.status} ${JSON.stringify(now.body).slice(0, 200)}`);
          report.backgroundCases++;
          continue;
        }
        const run = await waitFor(
          `the night of "${c.name}" to end`,
          async () => {
            const runs = (await must(app, 'sleep.runs', { limit: 5 })) as any[];
            const r = runs.find((x) => x.id === now.body.runId);
            return r && r.status !== 'running' ? r : undefined;
          },
          180_000,
          250,
        ).catch((err: Error) => ({ status: 'running', error: err.message, steps: [] }));
        const audits = ((await must(app, 'sleep.audit', { limit: 50 })).items as any[]).filter((a) => a.id > lastAudit);
        const bad = audits.filter((a) => a.status !== 'ok');
        const badWithWords = bad.filter((a) => (a.error ?? '').trim() !== '');
        const okAudits = audits.filter((a) => a.status === 'ok');
        // Every call answered with the broken reply must be audited as not ok, with words, and the night must end.
        const ok = run.status !== 'running' && audits.length > 0 && badWithWords.length === bad.length && (okAudits.length === 0 || !!c.allowComplete);
        const ending = `run ${run.status}${run.error ? ` (${String(run.error).slice(0, 80)})` : ''}; audit ${audits.map((a) => `${a.purpose}:${a.status}${a.error ? `(${String(a.error).slice(0, 60)})` : ''}`).join(', ')}`;
        report.backgroundCases++;
        if (ok) report.backgroundPassed++;
        else report.problems.push(`sleep, ${c.name}: ${ending}`);
        report.results.push({ task: 'sleep', name: c.name, ok, ending, ms: Date.now() - t0 });
        log(`  sleep / ${c.name}: ${ok ? 'ok' : 'FAIL'} (${ending.slice(0, 120)})`);
        current = undefined;
        if (!(await alive(app))) {
          report.appDead++;
          report.problems.push(`sleep, ${c.name}: the app did not answer the next chat`);
        }
      }
    }
  } finally {
    await proc.stop();
    await fake.close();
    report.elapsedS = Math.round((Date.now() - started) / 1000);
  }
  return report;
}

/** The next call works: app.info answers and a normal chat completes with the model's words. */
async function alive(app: AppEndpoint): Promise<boolean> {
  if ((await call(app, 'app.info', {})).status !== 200) return false;
  const conversation = await call(app, 'conversations.create', { title: 'alive?' });
  if (conversation.status !== 200) return false;
  const sent = await call(app, 'chat.send', { conversationId: conversation.body.id, content: 'still there?' });
  if (sent.status !== 200) return false;
  const reply = await waitFor(
    'a normal reply',
    async () => {
      const got = await call(app, 'conversations.get', { id: conversation.body.id });
      const m = got.status === 200 ? (got.body.messages as any[]).find((x) => x.id === sent.body.assistantMessage.id) : undefined;
      return m && m.status !== 'streaming' ? m : undefined;
    },
    60_000,
  ).catch(() => undefined);
  return reply?.status === 'complete' && String(reply.content).includes('still there?');
}
