// Structured background answers, whole nights on real PGlite against the loopback model: a server held
// to the schema (one that answers in prose when it is not) gives memories with no repair; a server that
// refuses the schema in its own words still sleeps, by the prompt alone, and is remembered so the next
// night asks it no more; the Anthropic dialect gets a forced tool whose input is the answer. Also: each
// server's refusal, through the real clients, is recognised as one, and other failures are not.
import { afterEach, describe, expect, it } from 'vitest';
import { asksForSchema, findTask, forcedTool, sleepResponder } from '../../e2e/fake-llm/sleep-responder.js';
import { SCHEMA_REFUSALS } from '../../e2e/fake-llm/refusals.js';
import type { RecordedRequest } from '../../e2e/fake-llm/server.js';
import { openDatabase } from '../db/open.js';
import { createProvider } from '../llm/index.js';
import { collect } from '../llm/test-support.js';
import { PATIENCE_MS } from '../testing/patience.js';
import { isSchemaRefusal } from './audit.js';
import {
  allMemories,
  auditOf,
  closeHost,
  day,
  fake,
  model,
  night,
  openHost,
  say,
  seedDir,
  talk,
  useCycleHarness,
  type Opened,
} from './testing/cycle-harness.js';

useCycleHarness();

const LINES = [
  { who: 'Mara' as const, text: 'I just moved to Lisbon with my sister Lena, and I love the light over the river in the evening.' },
  { who: 'Me' as const, text: 'That sounds beautiful. How is the new flat?' },
  { who: 'Mara' as const, text: 'Small but bright. I prefer short answers from you when I am tired, by the way.' },
  { who: 'Me' as const, text: 'Noted, I will keep it short on tired evenings.' },
];

let opened: Opened | undefined;
afterEach(async () => {
  await closeHost(opened);
  opened = undefined;
  model.reset();
  fake.reset();
});

async function sleepingHost(kind: 'openai-compatible' | 'anthropic' = 'openai-compatible') {
  const { dir, value: conversationId } = await seedDir(({ conversations }) => talk(conversations, 'Lisbon', day(-1), LINES));
  opened = await openHost(dir, { lowDisk: true });
  const provider = await opened.host.api['providers.save']({
    kind,
    name: 'fake',
    baseUrl: kind === 'anthropic' ? fake.url : fake.baseUrl,
    model: 'fake-model',
  });
  await opened.host.api['settings.update']({ chatProviderId: provider.id });
  fake.reset();
  return { ...opened, conversationId, providerId: provider.id };
}

const sleepRequests = (): RecordedRequest[] => fake.requests.filter((r) => findTask(r.body) !== undefined);

/** What the database says about the audit rows and the connection, read with the host closed. */
async function afterClosing(dir: string, providerId: string) {
  await closeHost(opened);
  opened = undefined;
  const db = await openDatabase(dir);
  try {
    const rows = (await db.query<{ status: string; asked: string; error: string | null }>('SELECT status, asked, error FROM auto_llm_runs ORDER BY id')).rows;
    const refused = (
      await db.query<{ schema_refused: { said: string; model: string } | null }>('SELECT schema_refused FROM providers WHERE id = $1', [providerId])
    ).rows[0]!.schema_refused;
    return { rows, refused };
  } finally {
    await db.close();
  }
}

describe('a night asked with the answer schema', () => {
  it('gets memories from a server held to the schema, with no repair call, every request carrying response_format', async () => {
    // Without the schema this model answers in prose: every usable answer here came from asking with it.
    model.answer = sleepResponder({ schema: 'prose-then-json' });
    const A = await sleepingHost();
    const { event, run } = await night(A.host);
    expect(event.status).toBe('done');
    expect((await allMemories(A.host)).length).toBeGreaterThan(0);
    const audit = await auditOf(A.host, run.id);
    expect(audit.length).toBeGreaterThan(0);
    expect(audit.filter((a) => a.status !== 'ok')).toEqual([]);

    const sent = sleepRequests();
    expect(sent.length).toBe(audit.length);
    for (const r of sent) {
      const task = findTask(r.body)!;
      expect((r.body as { response_format: unknown }).response_format).toMatchObject({
        type: 'json_schema',
        json_schema: { name: task.purpose.replace(':', '_'), strict: true, schema: { type: 'object', additionalProperties: false } },
      });
    }
    const { rows, refused } = await afterClosing(A.dir, A.providerId);
    expect(rows.map((r) => r.asked)).toEqual(rows.map(() => 'schema'));
    expect(refused).toBeNull();
  });

  it('sleeps by the prompt alone when the server refuses the schema, remembers it, and asks the next night without it', async () => {
    const answer = sleepResponder();
    model.answer = (body) => (findTask(body) && asksForSchema(body) ? SCHEMA_REFUSALS.openai.reply : answer(body));
    const A = await sleepingHost();
    const first = await night(A.host);
    expect(first.event.status).toBe('done');
    expect((await allMemories(A.host)).length).toBeGreaterThan(0);
    const audit = await auditOf(A.host, first.run.id);
    // The refused call, then the same call by the prompt alone; every later call by the prompt alone.
    expect(audit[0]).toMatchObject({ status: 'error', purpose: 'light-sleep' });
    expect(audit[0]!.error).toContain("'response_format' of type 'json_schema' is not supported with this model");
    expect(audit.slice(1).map((a) => a.status)).toEqual(audit.slice(1).map(() => 'ok'));
    const sent = sleepRequests();
    expect(sent.map((r) => asksForSchema(r.body))).toEqual([true, ...sent.slice(1).map(() => false)]);

    // The next night: something new was said, and no request carries the schema.
    await say(A.host, A.conversationId, 'Lena and I are painting the kitchen yellow this weekend, I am so excited about it.');
    fake.reset();
    const second = await night(A.host);
    expect(second.event.status).toBe('done');
    expect(sleepRequests().length).toBeGreaterThan(0);
    expect(sleepRequests().filter((r) => asksForSchema(r.body))).toEqual([]);

    const { rows, refused } = await afterClosing(A.dir, A.providerId);
    expect(rows[0]).toMatchObject({ status: 'error', asked: 'schema' });
    expect(rows.slice(1).map((r) => r.asked)).toEqual(rows.slice(1).map(() => 'prompt'));
    expect(refused).toMatchObject({ model: 'fake-model', said: expect.stringContaining('response_format') });
  });

  it('asks Anthropic with a forced tool and uses the tool input as the answer', async () => {
    model.answer = sleepResponder({ schema: 'honour' });
    const A = await sleepingHost('anthropic');
    const { event, run } = await night(A.host);
    expect(event.status).toBe('done');
    expect((await allMemories(A.host)).length).toBeGreaterThan(0);
    const sent = sleepRequests();
    expect(sent.length).toBeGreaterThan(0);
    for (const r of sent) {
      expect(r.path).toBe('/v1/messages');
      const name = forcedTool(r.body)!;
      expect(name).toBe(findTask(r.body)!.purpose.replace(':', '_'));
      expect((r.body as { tools: { name: string; input_schema: { type: string } }[] }).tools).toEqual([
        expect.objectContaining({ name, input_schema: expect.objectContaining({ type: 'object' }) }),
      ]);
    }
    const audit = await auditOf(A.host, run.id);
    expect(audit.map((a) => a.status)).toEqual(audit.map(() => 'ok'));
    // The answer recorded is the tool's input, as JSON.
    const entry = await A.host.api['sleep.auditEntry']({ id: audit[0]!.id });
    expect(JSON.parse(entry.response)).toHaveProperty('memories');
  });
});

describe('refusals', () => {
  const request = { model: 'fake-model', messages: [{ role: 'user' as const, content: 'Task: dream' }], responseSchema: { name: 'dream', schema: {} } };

  it("recognises each server's refusal of a schema through the real clients", async () => {
    for (const [key, refusal] of Object.entries(SCHEMA_REFUSALS)) {
      const kind = key === 'anthropic' ? 'anthropic' : 'openai-compatible';
      fake.script(refusal.reply, refusal.reply, refusal.reply);
      const client = createProvider({ kind, baseUrl: kind === 'anthropic' ? fake.url : fake.baseUrl, retryBaseMs: 5, timeoutMs: PATIENCE_MS });
      const { error } = await collect(client.stream(request));
      expect(isSchemaRefusal(error), `${refusal.server}: ${error?.message}`).toBe(true);
      fake.reset();
    }
  });

  it('takes no other failure for one', async () => {
    const client = createProvider({ kind: 'openai-compatible', baseUrl: fake.baseUrl, retryBaseMs: 5, timeoutMs: PATIENCE_MS });
    for (const status of [400, 401, 404, 500]) {
      fake.script({ kind: 'error', status, headers: { 'retry-after-ms': '0' } }, { kind: 'error', status, headers: { 'retry-after-ms': '0' } });
      fake.script({ kind: 'error', status, headers: { 'retry-after-ms': '0' } });
      const { error } = await collect(client.stream(request));
      expect(error, String(status)).toBeDefined();
      expect(isSchemaRefusal(error), String(status)).toBe(false);
      fake.reset();
    }
    fake.script({ kind: 'cut', text: 'response_format json_schema' });
    const cut = await collect(client.stream(request));
    expect(isSchemaRefusal(cut.error)).toBe(false);
  });
});
