// Generation settings per connection: through the real host, the real clients and the loopback fake
// server, each protocol's request body carries them in its own fields; bad values are refused in
// words and change nothing; a reset sends nothing again.
import fs from 'node:fs';
import path from 'node:path';
import { strFromU8, strToU8, unzipSync, zipSync } from 'fflate';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Message, ProviderKind } from '../../shared/api.js';
import { DEFAULT_GENERATION, type GenerationSettings } from '../../shared/api/providers.js';
import { startFakeLlm, type FakeLlm } from '../../e2e/fake-llm/server.js';
import { serveOllama } from '../../e2e/fake-llm/ollama.js';
import { exportArchive } from '../archive/export.js';
import { openDatabase, type Database } from '../db/open.js';
import { restoreArchive } from '../imports/anima-archive-restore.js';
import { parseImport } from '../imports/detect.js';
import { SettingsStore } from '../settings/settings.js';
import { markImportedHistoryRead } from '../sleep/imported-history.js';
import { dbTemplate, nextEvent, startTestHost, tempDataDir } from '../testing/host.js';
import { PATIENCE_MS } from '../testing/patience.js';
import type { Host } from '../host/types.js';

let fake: FakeLlm;
const hosts: Host[] = [];

beforeEach(async () => {
  fake = await startFakeLlm({ defaultChunkDelayMs: 0 });
});
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
  await fake.close();
});

async function host(): Promise<Host> {
  const h = await startTestHost({ providerTimeoutMs: PATIENCE_MS });
  hosts.push(h);
  return h;
}

async function sendAndWait(h: Host, content: string): Promise<Message> {
  const { id } = await h.api['conversations.create']({});
  const finished = nextEvent(h, 'chat.finished', (p: { conversationId: string }) => p.conversationId === id);
  await h.api['chat.send']({ conversationId: id, content });
  return ((await finished) as { message: Message }).message;
}

const SETTINGS: GenerationSettings = { temperature: 0.7, topP: 0.9, maxTokens: 300, stop: ['\nUser:', '###'] };
const chatPath: Record<Exclude<ProviderKind, 'local'>, string> = {
  'openai-compatible': '/v1/chat/completions',
  anthropic: '/v1/messages',
  ollama: '/api/chat',
};
const lastChat = (kind: keyof typeof chatPath) => fake.requests.filter((r) => r.path === chatPath[kind]).at(-1)?.body as Record<string, unknown>;

describe('each protocol carries the settings in its own fields', () => {
  it('OpenAI-compatible: temperature, top_p, max_tokens, stop', async () => {
    const h = await host();
    await h.api['providers.save']({ kind: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, model: 'fake-model', generation: SETTINGS });
    expect((await sendAndWait(h, 'Hello there')).status).toBe('complete');
    expect(lastChat('openai-compatible')).toMatchObject({ temperature: 0.7, top_p: 0.9, max_tokens: 300, stop: ['\nUser:', '###'] });
  }, 120_000);

  it('Anthropic: temperature, top_p, max_tokens, stop_sequences', async () => {
    const h = await host();
    await h.api['providers.save']({ kind: 'anthropic', name: 'Claude', baseUrl: fake.url, model: 'fake-model', apiKey: 'sk-ant-test', generation: SETTINGS });
    expect((await sendAndWait(h, 'Hello there')).status).toBe('complete');
    expect(lastChat('anthropic')).toMatchObject({ temperature: 0.7, top_p: 0.9, max_tokens: 300, stop_sequences: ['\nUser:', '###'] });
  }, 120_000);

  it('Ollama: options.temperature, top_p, num_predict, stop (beside num_ctx)', async () => {
    fake.models = ['llama3.2:latest'];
    serveOllama(fake, { defaults: { contextLength: 8192, capabilities: ['completion', 'tools'], family: 'llama' } });
    const h = await host();
    await h.api['providers.save']({ kind: 'ollama', name: 'Ollama', baseUrl: fake.url, model: 'llama3.2:latest', generation: SETTINGS });
    expect((await sendAndWait(h, 'Hello there')).status).toBe('complete');
    expect(lastChat('ollama')).toMatchObject({ options: { num_ctx: 8192, temperature: 0.7, top_p: 0.9, num_predict: 300, stop: ['\nUser:', '###'] } });
  }, 120_000);

  it('unset (the default, or after a reset) sends none of them, so the server decides', async () => {
    const h = await host();
    const saved = await h.api['providers.save']({ kind: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, model: 'fake-model' });
    expect(saved.generation).toEqual(DEFAULT_GENERATION);
    await sendAndWait(h, 'Hello there');
    let body = lastChat('openai-compatible');
    for (const field of ['temperature', 'top_p', 'max_tokens', 'max_completion_tokens', 'stop']) expect(body).not.toHaveProperty(field);

    await h.api['providers.save']({ id: saved.id, kind: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, model: 'fake-model', generation: SETTINGS });
    // A save that does not mention them keeps them (onboarding, a renamed connection).
    const renamed = await h.api['providers.save']({ id: saved.id, kind: 'openai-compatible', name: 'Renamed', baseUrl: fake.baseUrl, model: 'fake-model' });
    expect(renamed.generation).toEqual(SETTINGS);
    const reset = await h.api['providers.save']({
      id: saved.id,
      kind: 'openai-compatible',
      name: 'Renamed',
      baseUrl: fake.baseUrl,
      model: 'fake-model',
      generation: DEFAULT_GENERATION,
    });
    expect(reset.generation).toEqual(DEFAULT_GENERATION);
    await sendAndWait(h, 'Hello again');
    body = lastChat('openai-compatible');
    for (const field of ['temperature', 'top_p', 'max_tokens', 'stop']) expect(body).not.toHaveProperty(field);
  }, 120_000);
});

describe('bad values are refused in words and change nothing', () => {
  const base = { kind: 'openai-compatible' as const, name: 'Fake', model: 'fake-model', contextTokens: 8192 };
  const cases: [string, Partial<GenerationSettings>, RegExp, string][] = [
    ['a temperature above 2', { temperature: 2.5 }, /temperature must be a number from 0 to 2/, 'generation.temperature'],
    ['a negative top-p', { topP: -0.1 }, /Top-p must be a number from 0 to 1/, 'generation.topP'],
    ['a reply longer than half the context', { maxTokens: 5000 }, /from 1 to 4096/, 'generation.maxTokens'],
    ['no reply at all', { maxTokens: 0 }, /longest reply/, 'generation.maxTokens'],
    ['five stop sequences', { stop: ['a', 'b', 'c', 'd', 'e'] }, /At most 4 stop sequences/, 'generation.stop'],
    ['an empty stop sequence', { stop: ['  '] }, /cannot be empty/, 'generation.stop'],
    ['a stop sequence of 51 characters', { stop: ['x'.repeat(51)] }, /at most 50 characters/, 'generation.stop'],
  ];
  for (const [what, bad, words, field] of cases) {
    it(`refuses ${what}`, async () => {
      const h = await host();
      const saved = await h.api['providers.save']({ ...base, baseUrl: fake.baseUrl, generation: SETTINGS });
      await expect(
        h.api['providers.save']({ ...base, id: saved.id, name: 'Changed', baseUrl: fake.baseUrl, generation: { ...SETTINGS, ...bad } }),
      ).rejects.toMatchObject({ code: 'invalid_input', field, message: expect.stringMatching(words) as unknown });
      const [after] = await h.api['providers.list']({});
      expect(after).toMatchObject({ name: 'Fake', generation: SETTINGS });
    }, 120_000);
  }

  it('refuses a temperature above 1 for Anthropic, which takes 0 to 1', async () => {
    const h = await host();
    await expect(
      h.api['providers.save']({ kind: 'anthropic', name: 'Claude', baseUrl: fake.url, model: 'm', apiKey: 'k', generation: { ...SETTINGS, temperature: 1.2 } }),
    ).rejects.toMatchObject({ code: 'invalid_input', field: 'generation.temperature', message: expect.stringMatching(/from 0 to 1\./) as unknown });
    expect(await h.api['providers.list']({})).toEqual([]);
  }, 120_000);
});

describe('an Anima archive carries them', () => {
  const opened: { dir: string; db: Database }[] = [];
  afterEach(async () => {
    for (const { dir, db } of opened.splice(0)) {
      await db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
  const folder = async () => {
    const dir = tempDataDir('anima-generation-');
    const db = await openDatabase(dir, { template: dbTemplate() });
    opened.push({ dir, db });
    return { dir, db };
  };
  const row = async (db: Database) =>
    (await db.query<Record<string, unknown>>('SELECT temperature, top_p, max_reply_tokens, stop_sequences FROM providers WHERE id = $1', ['p1'])).rows[0];

  it('exported and imported with the connection; a value this version refuses comes back unset', async () => {
    const source = await folder();
    await source.db.query(
      `INSERT INTO providers (id, kind, name, base_url, model, context_tokens, temperature, top_p, max_reply_tokens, stop_sequences)
       VALUES ('p1', 'anthropic', 'Claude', 'https://api.anthropic.com', 'm', 8192, 0.5, 0.9, 300, '["###"]')`,
    );
    const file = path.join(source.dir, 'exports', 'a.zip');
    await exportArchive({ db: source.db, appVersion: '1.2.3', file, sql: false });
    const zip = fs.readFileSync(file);
    const restore = async (bytes: Uint8Array) => {
      const target = await folder();
      const parsed = parseImport(Buffer.from(bytes), 'a.zip');
      await restoreArchive(parsed.archive!, { db: target.db, settings: new SettingsStore(target.db, () => {}), markRead: markImportedHistoryRead });
      return row(target.db);
    };
    expect(await restore(zip)).toMatchObject({ top_p: expect.closeTo(0.9, 5) as unknown, max_reply_tokens: 300, stop_sequences: ['###'] });
    expect((await restore(zip))!.temperature).toBeCloseTo(0.5, 5);

    // An archive edited by hand: Anthropic takes no temperature above 1, and five stop sequences are too many.
    const files = unzipSync(zip);
    const json = JSON.parse(strFromU8(files['anima.json']!)) as { sections: { providers: Record<string, unknown>[] } };
    Object.assign(json.sections.providers[0]!, { temperature: 1.5, stop_sequences: ['a', 'b', 'c', 'd', 'e'] });
    files['anima.json'] = strToU8(JSON.stringify(json));
    expect(await restore(zipSync(files))).toMatchObject({ temperature: null, stop_sequences: [], max_reply_tokens: 300 });
  }, 120_000);
});
