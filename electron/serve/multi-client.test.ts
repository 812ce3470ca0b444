// Several windows on one host, over the real browser bridge: two clients chat in two conversations
// at the same time while a sleep cycle runs, against the loopback fake model (chat echoes, sleep
// prompts answered by sleepResponder). Every event reaches both event streams, in the same order;
// nothing is written twice; what one client sends, the other reads after the event that announced it.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startFakeLlm, type FakeLlm } from '../../e2e/fake-llm/server.js';
import { findTask, sleepResponder } from '../../e2e/fake-llm/sleep-responder.js';
import type { ApiEvents, Message, SendResult, SleepRun } from '../../shared/api.js';
import type { Host } from '../host/types.js';
import { PATIENCE_MS } from '../testing/patience.js';
import { startTestHost } from '../testing/host.js';
import { startServer, type RunningServer } from './server.js';
import { openEvents, waitFor } from './testing/server-harness.js';

const TOKEN = 'multi-client-token-0123456789';
const SENDS = 3;

let fake: FakeLlm;
let host: Host;
let server: RunningServer;
let staticDir: string;
/** Sleep prompts wait for this, so the cycle is surely running while the clients chat. */
let releaseSleep!: () => void;
const sleepHeld = new Promise<void>((resolve) => (releaseSleep = resolve));
let sleepAsked = false;

interface Seen {
  event: string;
  data: string;
}

/** One window: its event stream, read into a list as events arrive, and its calls. */
async function client() {
  const stream = await openEvents(`${server.origin}/api/events?token=${TOKEN}`);
  const events: Seen[] = [];
  let ended = false;
  const reading = (async () => {
    try {
      for (;;) {
        const ev = await stream.next(10 * PATIENCE_MS);
        if (!ev) break;
        events.push({ event: ev.event, data: ev.data });
      }
    } catch {
      // Aborted at the end of the test.
    } finally {
      ended = true;
    }
  })();
  await waitFor(() => events.some((e) => e.event === 'hello'));
  return {
    events,
    ended: () => ended,
    async call<T>(method: string, input: unknown): Promise<T> {
      const res = await fetch(`${server.origin}/api/call/${method}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(input),
      });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`${method}: ${res.status} ${text}`);
      return JSON.parse(text) as T;
    },
    /** The payloads of this name seen so far. */
    payloads<E extends keyof ApiEvents>(name: E): ApiEvents[E][] {
      return events.filter((e) => e.event === name).map((e) => JSON.parse(e.data) as ApiEvents[E]);
    },
    async close() {
      stream.abort();
      await reading;
    },
  };
}
type Client = Awaited<ReturnType<typeof client>>;

const finishedOf = (c: Client, messageId: string) => c.payloads('chat.finished').find((p) => p.message.id === messageId);

/** Sends `content` and waits for its reply to finish on the sender's own stream. */
async function turn(c: Client, conversationId: string, content: string): Promise<SendResult> {
  const sent = await c.call<SendResult>('chat.send', { conversationId, content });
  await waitFor(() => finishedOf(c, sent.assistantMessage.id) !== undefined);
  return sent;
}

beforeAll(async () => {
  fake = await startFakeLlm({ defaultChunkDelayMs: 2 });
  const answerSleep = sleepResponder();
  fake.respond = async (body) => {
    if (!findTask(body)) return undefined; // chat: the echo
    sleepAsked = true;
    await sleepHeld;
    return answerSleep(body);
  };
  staticDir = await mkdtemp(path.join(tmpdir(), 'anima-multi-client-'));
  await writeFile(path.join(staticDir, 'index.html'), '<!doctype html><title>Anima</title>');
  host = await startTestHost({ sleep: { tickMs: 0 } });
  server = await startServer({ host, staticDir, token: TOKEN, log: () => {} });
  await host.api['settings.update']({ timeZone: 'UTC', sleep: { auto: false, nap: false } });
  const provider = await host.api['providers.save']({ kind: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, model: 'fake-model' });
  await host.api['settings.update']({ chatProviderId: provider.id });
});

afterAll(async () => {
  releaseSleep();
  await server?.close();
  await host?.close();
  await fake?.close();
  if (staticDir) await rm(staticDir, { recursive: true, force: true });
});

describe('two clients chatting while a sleep cycle runs', () => {
  it('every event reaches both streams, nothing is written twice, each reads what the other sent', async () => {
    const a = await client();
    const b = await client();
    const one = await a.call<{ id: string }>('conversations.create', { title: 'Sofa' });
    const two = await b.call<{ id: string }>('conversations.create', { title: 'Train' });

    // Something for the night to read, then the night, held at its first model call.
    await turn(a, one.id, 'I moved to Lisbon last spring and my sister Lena visits in June.');
    const night = await a.call<{ runId: number }>('sleep.now', {});
    await waitFor(() => sleepAsked);
    await waitFor(() => b.payloads('sleep.progress').some((p) => p.runId === night.runId));

    // Both chat at once, each in their own conversation, while the cycle waits on its model.
    const sentA: SendResult[] = [];
    const sentB: SendResult[] = [];
    await Promise.all([
      (async () => {
        for (let i = 0; i < SENDS; i++) sentA.push(await turn(a, one.id, `from the laptop ${i}`));
      })(),
      (async () => {
        for (let i = 0; i < SENDS; i++) sentB.push(await turn(b, two.id, `from the phone ${i}`));
      })(),
    ]);
    const running = (await a.call<SleepRun[]>('sleep.runs', { limit: 5 })).find((r) => r.id === night.runId);
    expect(running?.status).toBe('running');

    // Each client reads, after the event, what the other sent.
    for (const [reader, sent, conversationId] of [
      [b, sentA, one.id],
      [a, sentB, two.id],
    ] as const) {
      for (const s of sent) {
        await waitFor(() => finishedOf(reader, s.assistantMessage.id) !== undefined);
        const { messages } = await reader.call<{ messages: Message[] }>('conversations.get', { id: conversationId });
        expect(messages.find((m) => m.id === s.userMessage.id)?.content).toBe(s.userMessage.content);
        expect(messages.find((m) => m.id === s.assistantMessage.id)).toEqual(finishedOf(reader, s.assistantMessage.id)!.message);
      }
    }

    // Before the reply's first word, the other stream was told the conversation changed: a window
    // showing it can read the new message then, not only once the reply is done.
    for (const [reader, sent, conversationId] of [
      [b, sentA, one.id],
      [a, sentB, two.id],
    ] as const) {
      for (const s of sent) {
        const first = reader.events.findIndex((e) => e.data.includes(s.assistantMessage.id));
        const told = reader.events.slice(0, first).findLastIndex((e) => e.event === 'conversations.changed' && e.data.includes(conversationId));
        expect(told).toBeGreaterThan(-1);
      }
    }

    releaseSleep();
    await waitFor(() => a.payloads('sleep.finished').some((p) => p.runId === night.runId));
    // A marker after everything: once both saw it, both saw all that came before.
    await a.call('settings.update', { timeZone: 'Europe/Lisbon' });
    const marker = (c: Client) => c.events.findIndex((e) => e.event === 'settings.changed' && e.data.includes('Europe/Lisbon'));
    await waitFor(() => marker(a) >= 0 && marker(b) >= 0);

    const upTo = (c: Client) => c.events.slice(0, marker(c) + 1);
    expect(upTo(b)).toEqual(upTo(a));
    const names = new Set(upTo(a).map((e) => e.event));
    for (const name of ['chat.delta', 'chat.finished', 'conversations.changed', 'sleep.progress', 'sleep.finished']) expect(names).toContain(name);
    expect(b.payloads('sleep.finished').filter((p) => p.runId === night.runId)).toHaveLength(1);
    expect(b.payloads('sleep.finished')[0]!.status).toBe('done');

    // Nothing written twice: one message of the person's and one reply per send, one run of the night.
    const { messages: inOne } = await b.call<{ messages: Message[] }>('conversations.get', { id: one.id });
    const { messages: inTwo } = await a.call<{ messages: Message[] }>('conversations.get', { id: two.id });
    expect(inOne.map((m) => m.role)).toEqual(
      Array<string[]>(SENDS + 1)
        .fill(['user', 'assistant'])
        .flat(),
    );
    expect(inTwo.map((m) => m.role)).toEqual(Array<string[]>(SENDS).fill(['user', 'assistant']).flat());
    expect(inTwo.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(sentB.map((s) => s.userMessage.content));
    expect(inOne.every((m) => m.status === 'complete')).toBe(true);
    expect(new Set([...inOne, ...inTwo].map((m) => m.id)).size).toBe(inOne.length + inTwo.length);
    const runs = await a.call<SleepRun[]>('sleep.runs', { limit: 10 });
    expect(runs.map((r) => r.id)).toEqual([night.runId]);

    await a.close();
    await b.close();
    expect(a.ended() && b.ended()).toBe(true);
  });
});
