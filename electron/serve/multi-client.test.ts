// Several windows on one host, over the real bridge: this machine's window (loopback HTTP) and a
// paired phone (HTTPS, the LAN listener on 127.0.0.1) chat in two conversations at the same time
// while a sleep cycle runs, against the loopback fake model (chat echoes, sleep prompts answered by
// sleepResponder). Every event reaches both event streams, in the same order; nothing is written
// twice; what one client sends, the other reads after the event that announced it.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startFakeLlm, type FakeLlm } from '../../e2e/fake-llm/server.js';
import { findTask, sleepResponder } from '../../e2e/fake-llm/sleep-responder.js';
import type { ApiEvents, Message, SendResult, SleepRun } from '../../shared/api.js';
import type { Host } from '../host/types.js';
import { startTestHost } from '../testing/host.js';
import { startServer, type RunningServer } from './server.js';
import { waitFor } from './testing/server-harness.js';
import { ensureCertificate } from './tls.js';

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

/** How a client reaches the server: the loopback listener with the folder's token, or HTTPS as a paired device. */
interface Wire {
  base: string;
  token: string;
  /** The certificate a paired device trusts (HTTPS only). */
  ca?: string;
}

function request(wire: Wire | { base: string; ca?: string }, method: string, urlPath: string, headers: Record<string, string>, body?: string) {
  const url = new URL(urlPath, wire.base);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<IncomingMessage>((resolve, reject) => {
    const req = send(url, { method, headers, agent: false, ...(wire.ca ? { ca: wire.ca } : {}) }, resolve);
    req.on('error', reject);
    req.end(body);
  });
}

async function post<T>(wire: Wire | { base: string; ca?: string }, urlPath: string, input: unknown, token?: string): Promise<T> {
  const body = JSON.stringify(input);
  const res = await request(wire, 'POST', urlPath, { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) }, body);
  let text = '';
  for await (const chunk of res) text += (chunk as Buffer).toString('utf8');
  if (res.statusCode !== 200) throw new Error(`${urlPath}: ${res.statusCode} ${text}`);
  return JSON.parse(text) as T;
}

/** A phone: paired with the one-time secret the owner's window started, over the LAN listener. */
async function pairedPhone(): Promise<Wire> {
  const lan = server.lan!;
  const { cert } = await ensureCertificate(host.dataDir, lan.names);
  const wire = { base: `https://127.0.0.1:${lan.port}`, ca: cert };
  const start = await host.api['devices.pairingStart']({});
  expect(start.fingerprint).toBe(lan.fingerprint);
  const { token } = await post<{ token: string }>(wire, '/api/pair', { secret: start.secret, name: 'Phone' });
  return { ...wire, token };
}

/** One window: its event stream, read into a list as events arrive, and its calls. */
async function client(wire: Wire) {
  const res = await request(wire, 'GET', `/api/events?token=${encodeURIComponent(wire.token)}`, {});
  expect(res.statusCode).toBe(200);
  const events: Seen[] = [];
  let ended = false;
  let buffer = '';
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    buffer += chunk;
    for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const name = /^event: (.*)$/m.exec(block)?.[1];
      const data = [...block.matchAll(/^data: (.*)$/gm)].map((m) => m[1]).join('\n');
      if (name) events.push({ event: name, data });
    }
  });
  res.on('close', () => (ended = true));
  await waitFor(() => events.some((e) => e.event === 'hello'));
  return {
    events,
    ended: () => ended,
    call: <T>(method: string, input: unknown) => post<T>(wire, `/api/call/${method}`, input, wire.token),
    /** The payloads of this name seen so far. */
    payloads<E extends keyof ApiEvents>(name: E): ApiEvents[E][] {
      return events.filter((e) => e.event === name).map((e) => JSON.parse(e.data) as ApiEvents[E]);
    },
    async close() {
      res.destroy();
      await waitFor(() => ended);
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
  // As `anima serve --listen 127.0.0.1`: the loopback listener for this machine's window, HTTPS for devices.
  server = await startServer({ host, staticDir, token: TOKEN, log: () => {}, lan: { address: '127.0.0.1', port: 0 } });
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

describe("this machine's window and a paired phone chatting while a sleep cycle runs", () => {
  it('every event reaches both streams, nothing is written twice, each reads what the other sent', async () => {
    // The laptop is this machine's window; the phone a paired device over HTTPS.
    const a = await client({ base: server.origin, token: TOKEN });
    const b = await client(await pairedPhone());
    // A marker once both streams are open (the phone's own pairing and first use came before its stream).
    await a.call('settings.update', { sleep: { maxCallsPerNight: 999 } });
    const start = (c: Client) => c.events.findIndex((e) => e.event === 'settings.changed' && e.data.includes('"maxCallsPerNight":999'));
    await waitFor(() => start(a) >= 0 && start(b) >= 0);
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

    const upTo = (c: Client) => c.events.slice(start(c), marker(c) + 1);
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
