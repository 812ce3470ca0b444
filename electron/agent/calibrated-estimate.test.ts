// The token estimate, calibrated by the server: a server whose tokenizer counts twice what the
// default rule estimates (prompt_tokens in its usage) gets the next requests fitted tighter — fewer
// turns, and a prompt that fits by its own count — and the ratio survives a restart. Real host,
// on-disk PGlite, the real OpenAI-compatible client, the loopback fake answering in OpenAI's wire.
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { Message } from '../../shared/api.js';
import { startFakeLlm, type FakeLlm } from '../../e2e/fake-llm/server.js';
import { splitText, textStream } from '../../e2e/fake-llm/wire.js';
import { estimateTokens } from '../llm/context.js';
import { openDatabase } from '../db/open.js';
import { nextEvent, startTestHost, tempDataDir } from '../testing/host.js';
import { PATIENCE_MS } from '../testing/patience.js';
import type { Host } from '../host/types.js';

let fake: FakeLlm;
const hosts: Host[] = [];
/**
 * What the fake's tokenizer counts, as a multiple of the default rule's estimate (tool declarations
 * included, which the server counts too; the fit itself leaves them to the reply's reserve).
 */
let factor = 1;
/** The prompt_tokens the fake reported, and its count of the messages alone, by the last message of the request. */
const reported = new Map<string, { all: number; messages: number }>();

interface Body {
  messages: { role: string; content: string | null }[];
  tools?: unknown[];
}

/** The default rule's estimate of a request's messages and their framing. */
const messagesEstimate = (body: Body) => body.messages.reduce((sum, m) => sum + 4 + estimateTokens(m.content ?? ''), 0);

beforeEach(async () => {
  factor = 1;
  reported.clear();
  fake = await startFakeLlm({ defaultChunkDelayMs: 0 });
  fake.route('POST /v1/chat/completions', (raw, res) => {
    const body = raw as Body & { model: string };
    const messages = Math.round(messagesEstimate(body) * factor);
    const inputTokens = messages + Math.round((body.tools ? estimateTokens(JSON.stringify(body.tools)) : 0) * factor);
    reported.set(body.messages.at(-1)?.content ?? '', { all: inputTokens, messages });
    const wire = textStream('openai', { model: body.model, serial: reported.size, inputTokens }, splitText('Noted, go on.'));
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end([...wire.opening, ...wire.text, ...wire.ending].join(''));
  });
});
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
  await fake.close();
});

async function host(dataDir: string): Promise<Host> {
  const h = await startTestHost({ dataDir, providerTimeoutMs: PATIENCE_MS });
  hosts.push(h);
  return h;
}

async function send(h: Host, conversationId: string, content: string): Promise<Message> {
  const finished = nextEvent(h, 'chat.finished', (p: { conversationId: string }) => p.conversationId === conversationId);
  await h.api['chat.send']({ conversationId, content });
  return ((await finished) as { message: Message }).message;
}

/** About 400 tokens by the default rule, numbered. */
const longTurn = (i: number) => `Turn ${i} begins. ${'The garden path winds past the old stone wall and the pear tree. '.repeat(25)}Turn ${i} ends.`;

/** The chat request (not a nap's) that carried turn `i` last, its index among the requests, and how many numbered turns it held. */
function requestFor(i: number): { index: number; turns: number } {
  const index = fake.requests.findLastIndex((r) => {
    const last = (r.body as Body | undefined)?.messages?.at(-1);
    return r.path === '/v1/chat/completions' && last?.role === 'user' && last.content === longTurn(i);
  });
  const body = fake.requests[index]!.body as Body;
  return { index, turns: body.messages.filter((m) => m.role === 'user' && /^Turn \d+ begins/.test(m.content ?? '')).length };
}

const storedRatio = async (dataDir: string) => {
  const db = await openDatabase(dataDir);
  try {
    return (await db.query<{ chars_per_token: number | null }>('SELECT chars_per_token FROM providers')).rows[0]?.chars_per_token ?? null;
  } finally {
    await db.close();
  }
};

it('a server counting twice the estimate gets fewer turns that fit by its count, and a restart keeps the ratio', async () => {
  const dataDir = tempDataDir();
  let h = await host(dataDir);
  await h.api['providers.save']({ kind: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, model: 'fake-model', contextTokens: 6144 });
  const { id } = await h.api['conversations.create']({});
  // A tokenizer like the default rule: the estimate stays at four characters a token.
  for (let i = 1; i <= 10; i++) expect((await send(h, id, longTurn(i))).status).toBe('complete');
  const before = requestFor(10).turns;
  expect(before).toBeGreaterThanOrEqual(4);

  // Now the server counts twice as much: the turn after it reported so is fitted tighter.
  factor = 2;
  await send(h, id, longTurn(11));
  expect(requestFor(11).turns).toBe(before);
  await send(h, id, longTurn(12));
  const after = requestFor(12);
  expect(after.turns).toBeLessThan(before);
  expect(after.turns).toBeGreaterThanOrEqual(1);
  // Its messages fit by the server's own count, in the window less the answer's reserve.
  expect(reported.get(longTurn(12))!.messages).toBeLessThanOrEqual(6144 - 1024);

  await h.close();
  hosts.splice(hosts.indexOf(h), 1);
  const ratio = await storedRatio(dataDir);
  expect(ratio).not.toBeNull();
  expect(ratio!).toBeGreaterThanOrEqual(1.5);
  expect(ratio!).toBeLessThan(3);

  // After a restart the next request is fitted with the stored ratio at once.
  h = await host(dataDir);
  const requestsBefore = fake.requests.length;
  await send(h, id, longTurn(13));
  const restarted = requestFor(13);
  expect(restarted.index).toBeGreaterThanOrEqual(requestsBefore);
  expect(restarted.turns).toBeLessThan(before);
  expect(reported.get(longTurn(13))!.messages).toBeLessThanOrEqual(6144 - 1024);

  // Pointed at another model, the connection starts again from the default rule.
  const [saved] = await h.api['providers.list']({});
  await h.api['providers.save']({ id: saved!.id, kind: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, model: 'other-model', contextTokens: 6144 });
  await h.close();
  hosts.splice(hosts.indexOf(h), 1);
  expect(await storedRatio(dataDir)).toBeNull();
}, 180_000);
