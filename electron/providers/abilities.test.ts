// What a connection's model can do for Anima, from each source: what the kind is known to do, the
// server's own answer (Ollama /api/show capabilities), and a refused schema — the pure rule, then
// through the real host against the loopback fake server on real PGlite.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ProviderConfig, ServerFacts } from '../../shared/api/providers.js';
import { startFakeLlm, type FakeLlm } from '../../e2e/fake-llm/server.js';
import { serveOllama } from '../../e2e/fake-llm/ollama.js';
import { serveLlamaCpp } from '../../e2e/fake-llm/servers.js';
import { openDatabase } from '../db/open.js';
import { OwnerOnlyFileSecretStore } from '../settings/secrets.js';
import { startTestHost } from '../testing/host.js';
import { PATIENCE_MS } from '../testing/patience.js';
import type { Host } from '../host/types.js';
import { providerAbilities } from './abilities.js';
import { modelsDir, Providers } from './providers.js';

type Config = Pick<ProviderConfig, 'kind' | 'baseUrl' | 'server'>;
const facts = (extra: Partial<ServerFacts>): ServerFacts => ({
  software: null,
  contextTokens: null,
  capabilities: null,
  family: null,
  checkedAt: '2026-12-05T10:00:00.000Z',
  ...extra,
});

describe('what is known of the kind', () => {
  it('on-device: chats, but neither tools nor structured answers', () => {
    expect(providerAbilities({ kind: 'local', baseUrl: '', server: null }, false)).toEqual({
      chat: 'yes',
      tools: 'no',
      structured: 'no',
      embeddings: 'no',
      images: 'no',
    });
  });
  it('Anthropic and OpenAI’s own API: tools and structured answers', () => {
    const anthropic = providerAbilities({ kind: 'anthropic', baseUrl: 'https://api.anthropic.com', server: null }, false);
    expect(anthropic).toEqual({ chat: 'yes', tools: 'yes', structured: 'yes', embeddings: 'no', images: 'unknown' });
    const openai = providerAbilities({ kind: 'openai-compatible', baseUrl: 'https://api.openai.com/v1', server: null }, false);
    expect(openai).toEqual({ chat: 'yes', tools: 'yes', structured: 'yes', embeddings: 'unknown', images: 'unknown' });
  });
  it('a server that speaks OpenAI’s protocol: not known yet, structured answers once it is told apart', () => {
    const unknown = { chat: 'unknown', tools: 'unknown', structured: 'unknown', embeddings: 'unknown', images: 'unknown' };
    expect(providerAbilities({ kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:1234/v1', server: null }, false)).toEqual(unknown);
    expect(providerAbilities({ kind: 'openai-compatible', baseUrl: 'not a url', server: facts({}) }, false)).toEqual(unknown);
    const llamaCpp: Config = { kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:8080/v1', server: facts({ software: 'llama.cpp' }) };
    expect(providerAbilities(llamaCpp, false)).toEqual({ ...unknown, structured: 'yes' });
  });
});

describe('the server’s own answer', () => {
  it('Ollama’s capabilities say each ability, natively and behind /v1', () => {
    const server = facts({ software: 'ollama', capabilities: ['completion', 'vision'] });
    const expected = { chat: 'yes', tools: 'no', structured: 'yes', embeddings: 'no', images: 'yes' };
    expect(providerAbilities({ kind: 'ollama', baseUrl: 'http://127.0.0.1:11434', server }, false)).toEqual(expected);
    expect(providerAbilities({ kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:11434/v1', server }, false)).toEqual(expected);
  });
  it('an embedding model gives no answers at all', () => {
    const server = facts({ software: 'ollama', capabilities: ['embedding'] });
    expect(providerAbilities({ kind: 'ollama', baseUrl: 'http://127.0.0.1:11434', server }, false)).toEqual({
      chat: 'no',
      tools: 'no',
      structured: 'no',
      embeddings: 'yes',
      images: 'no',
    });
  });
});

describe('a refused schema', () => {
  it('means no structured answers, whatever the kind or the server says', () => {
    const server = facts({ software: 'ollama', capabilities: ['completion', 'tools'] });
    expect(providerAbilities({ kind: 'ollama', baseUrl: 'http://127.0.0.1:11434', server }, true).structured).toBe('no');
    expect(providerAbilities({ kind: 'anthropic', baseUrl: 'https://api.anthropic.com', server: null }, true).structured).toBe('no');
    expect(providerAbilities({ kind: 'openai-compatible', baseUrl: 'http://x:1/v1', server: null }, true).structured).toBe('no');
    // The rule keeps no state between calls.
    expect(providerAbilities({ kind: 'openai-compatible', baseUrl: 'http://x:1/v1', server: null }, false).structured).toBe('unknown');
  });
});

describe('through the host', () => {
  let fake: FakeLlm;
  let host: Host;
  beforeEach(async () => {
    fake = await startFakeLlm({ defaultChunkDelayMs: 0 });
    host = await startTestHost({ providerTimeoutMs: PATIENCE_MS });
  });
  afterEach(async () => {
    await host.close();
    await fake.close();
  });

  it('providers.list and providers.save carry the abilities; a refusal on record turns structured answers off', async () => {
    fake.models = ['small:latest'];
    serveOllama(fake, { defaults: { contextLength: 4096, capabilities: ['completion'], family: 'llama' } });
    const saved = await host.api['providers.save']({ kind: 'ollama', name: 'Ollama', baseUrl: fake.url, model: 'small:latest' });
    expect(saved.abilities).toEqual({ chat: 'yes', tools: 'no', structured: 'yes', embeddings: 'no', images: 'no' });

    // The refusal as the sleep room records it (electron/sleep/background.ts), with the host closed.
    await host.close();
    const db = await openDatabase(host.dataDir);
    await new Providers(db, new OwnerOnlyFileSecretStore(host.dataDir), { modelsDir: modelsDir(host.dataDir) }).rememberSchemaRefusal(
      saved.id,
      'format is not supported',
    );
    await db.close();
    host = await startTestHost({ dataDir: host.dataDir, providerTimeoutMs: PATIENCE_MS });
    const [listed] = await host.api['providers.list']({});
    expect(listed!.abilities).toMatchObject({ tools: 'no', structured: 'no' });
  });

  it('a llama.cpp server told apart by /props takes structured answers; its tools are not known yet', async () => {
    fake.models = ['qwen2.5-7b-instruct'];
    serveLlamaCpp(fake, { nCtx: 4096 });
    const saved = await host.api['providers.save']({ kind: 'openai-compatible', name: 'llama.cpp', baseUrl: fake.baseUrl, model: 'qwen2.5-7b-instruct' });
    expect(saved.abilities).toEqual({ chat: 'unknown', tools: 'unknown', structured: 'yes', embeddings: 'unknown', images: 'unknown' });
  });
});
