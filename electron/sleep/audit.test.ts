import fs from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startFakeLlm, type FakeLlm } from '../../e2e/fake-llm/server.js';
import { openDatabase, type Database } from '../db/open.js';
import { createProvider } from '../llm/index.js';
import { dbTemplate, tempDataDir } from '../testing/host.js';
import { estimateTokens } from '../llm/context.js';
import { auditedCall, MAX_RESPONSE_CHARS, repairEcho } from './audit.js';
import { PATIENCE_MS } from '../testing/patience.js';

let db: Database;
let dir: string;
let fake: FakeLlm;

const schema = z.object({ mood: z.string(), intensity: z.number().min(0).max(1) });
const base = {
  purpose: 'light-sleep' as const,
  stepId: 'imprint',
  model: 'fake-model',
  messages: [{ role: 'user' as const, content: 'How did today feel? Answer as JSON {mood, intensity}.' }],
  schema,
};

interface Row {
  status: string;
  error: string | null;
  prompt_chars: number;
  response_chars: number;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  duration_ms: number;
  prompt: string;
  response: string;
}

async function rows(): Promise<Row[]> {
  return (await db.query<Row>(`SELECT * FROM auto_llm_runs ORDER BY id`)).rows;
}

function provider(baseUrl = fake.baseUrl) {
  return createProvider({ kind: 'openai-compatible', baseUrl, maxRetries: 0, timeoutMs: PATIENCE_MS });
}

beforeAll(async () => {
  dir = tempDataDir('anima-sleep-audit-');
  db = await openDatabase(dir, { template: dbTemplate() });
  fake = await startFakeLlm({ defaultChunkDelayMs: 0 });
});

afterAll(async () => {
  await fake.close();
  await db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  await db.exec(`DELETE FROM auto_llm_runs;`);
  fake.reset(); // a test that failed halfway leaves no replies queued for this one
});

describe('auditedCall', () => {
  it('returns the validated value and records one ok row with sizes and tokens', async () => {
    fake.script({ kind: 'text', text: '```json\n{"mood": "calm", "intensity": 0.4}\n```' });
    const result = await auditedCall(db, provider(), base);
    expect(result).toEqual({ ok: true, value: { mood: 'calm', intensity: 0.4 } });
    const [row, ...more] = await rows();
    expect(more).toHaveLength(0);
    expect(row).toMatchObject({ status: 'ok', error: null });
    expect(row!.prompt).toContain('How did today feel?');
    expect(row!.prompt_chars).toBe(row!.prompt.length);
    expect(row!.response_chars).toBe(row!.response.length);
    expect(row!.response).toContain('"calm"');
    expect(row!.prompt_tokens).toBeGreaterThan(0);
    expect(row!.completion_tokens).toBeGreaterThan(0);
    expect(row!.duration_ms).toBeGreaterThanOrEqual(0);
    expect((await db.query('SELECT 1 FROM messages')).rows).toHaveLength(0);
  });

  it('repairs a prose answer once: an invalid row, then an ok row', async () => {
    fake.script({ kind: 'text', text: 'Today felt calm, mostly.' }, { kind: 'text', text: '{"mood": "calm", "intensity": 0.3}' });
    const result = await auditedCall(db, provider(), base);
    expect(result).toEqual({ ok: true, value: { mood: 'calm', intensity: 0.3 } });
    expect((await rows()).map((r) => r.status)).toEqual(['invalid', 'ok']);
    const [first, second] = await rows();
    expect(first!.error).toMatch(/not valid JSON/);
    // The repair turn shows the bad answer and the problem, and asks for JSON only.
    expect(second!.prompt).toContain('Today felt calm, mostly.');
    expect(second!.prompt).toMatch(/could not be used: it is not valid JSON/);
    const repairBody = fake.requests.filter((r) => r.path.endsWith('/chat/completions'))[1]!.body as { messages: { role: string }[] };
    expect(repairBody.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
  });

  it('quotes only as much of a bad answer as the context still holds, or none, so the repair is not refused as too long', async () => {
    const rambling = 'Today felt calm. '.repeat(120); // ~2,000 characters of prose
    const promptTokens = estimateTokens(base.messages[0]!.content);
    const calls = () => fake.requests.filter((r) => r.path.endsWith('/chat/completions'));
    const repairOf = (n: number) => calls()[n]!.body as { messages: { role: string; content: string }[] };

    // Room for about 150 more tokens: about 300 characters of it are quoted, marked as cut.
    fake.script({ kind: 'text', text: rambling }, { kind: 'text', text: '{"mood": "calm", "intensity": 0.3}' });
    const roomy = await auditedCall(db, provider(), { ...base, maxTokens: 500, contextTokens: promptTokens + 500 + 80 + 150 });
    expect(roomy.ok).toBe(true);
    const quoted = repairOf(1).messages[1]!;
    expect(quoted.role).toBe('assistant');
    expect(quoted.content).toBe(`${rambling.slice(0, 300)}\n[… cut off …]`);

    // No room at all: the problem is named without the quote.
    fake.script({ kind: 'text', text: rambling }, { kind: 'text', text: '{"mood": "calm", "intensity": 0.3}' });
    const tight = await auditedCall(db, provider(), { ...base, maxTokens: 500, contextTokens: promptTokens + 500 });
    expect(tight.ok).toBe(true);
    const repair = repairOf(3);
    expect(repair.messages.map((m) => m.role)).toEqual(['user', 'user']);
    expect(repair.messages[1]!.content).toMatch(/^Your previous answer could not be used: it is not valid JSON/);
    expect(JSON.stringify(repair)).not.toContain('Today felt calm.');
  });

  it('quotes a short bad answer whole when it fits, and none when a quote would be a scrap', () => {
    const opts = { messages: [{ role: 'user' as const, content: 'x'.repeat(400) }], maxTokens: 100 };
    expect(repairEcho('Calm.', opts)).toBe('Calm.');
    expect(repairEcho('Calm. '.repeat(1000), opts)).toHaveLength(4000 + '\n[… cut off …]'.length);
    expect(repairEcho('Calm. '.repeat(100), { ...opts, contextTokens: 100 + 100 + 80 + 50 })).toBe('');
    expect(repairEcho('Calm.', { ...opts, contextTokens: 100 + 100 + 80 + 50 })).toBe('Calm.');
  });

  it('gives up after one repair: two invalid rows and ok:false', async () => {
    fake.script({ kind: 'text', text: 'Calm.' }, { kind: 'text', text: '{"mood": "calm", "intensity": 7}' });
    const result = await auditedCall(db, provider(), base);
    expect(result.ok).toBe(false);
    const all = await rows();
    expect(all.map((r) => r.status)).toEqual(['invalid', 'invalid']);
    expect(all[1]!.error).toMatch(/intensity/);
    expect(fake.requests.filter((r) => r.path.endsWith('/chat/completions'))).toHaveLength(2);
  });

  it('records a provider failure as an error row without a repair attempt', async () => {
    fake.script({ kind: 'error', status: 500 });
    const result = await auditedCall(db, provider(), base);
    expect(result.ok).toBe(false);
    expect(result.ok === false && result.error).toBeTruthy();
    const all = await rows();
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ status: 'error', response: '', response_chars: 0 });
    expect(all[0]!.error).toBeTruthy();
  });

  it('records an unreachable provider as an error row', async () => {
    const down = await startFakeLlm();
    const url = down.baseUrl;
    await down.close();
    const result = await auditedCall(db, provider(url), base);
    expect(result.ok).toBe(false);
    expect((await rows()).map((r) => r.status)).toEqual(['error']);
  });

  it('cuts off an answer over 200 KB and treats it as invalid', async () => {
    const huge = `{"mood": "${'a'.repeat(MAX_RESPONSE_CHARS + 10_000)}", "intensity": 0.5}`;
    fake.script({ kind: 'text', text: huge, chunks: 50 }, { kind: 'text', text: 'still prose' });
    const result = await auditedCall(db, provider(), base);
    expect(result.ok).toBe(false);
    const all = await rows();
    expect(all.map((r) => r.status)).toEqual(['invalid', 'invalid']);
    expect(all[0]!.error).toMatch(/cut off/);
    expect(all[0]!.response_chars).toBe(MAX_RESPONSE_CHARS);
    // The repair turn carries only the beginning of the runaway answer.
    expect(all[1]!.prompt.length).toBeLessThan(10_000);
  });
});
