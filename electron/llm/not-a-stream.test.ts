// A server that answers a streaming request with HTTP 200 and something that is not an event stream
// — its error as plain JSON, a proxy's web page, a line of text — is reported in its own words,
// through the real clients of both wire protocols against the loopback fake server.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm } from '../../e2e/fake-llm/server.js';
import type { ProviderKind } from '../../shared/api.js';
import { createProvider, ProviderError } from './index.js';

let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake.close();
});
afterEach(() => fake.reset()); // a test that failed halfway leaves no replies queued for the next

async function failureOf(kind: ProviderKind): Promise<ProviderError> {
  const provider = createProvider({ kind, baseUrl: kind === 'anthropic' ? fake.url : fake.baseUrl, apiKey: 'sk-test-secret', maxRetries: 0 });
  try {
    for await (const event of provider.stream({ model: 'fake-model', messages: [{ role: 'user', content: 'hi' }] })) void event;
  } catch (error) {
    return error as ProviderError;
  }
  throw new Error('the stream ended without an error');
}

describe.each(['openai-compatible', 'anthropic'] as const)('%s: HTTP 200 without an event stream', (kind) => {
  it('an error as plain JSON keeps the server’s own words and kind (quota)', async () => {
    fake.script({ kind: 'error', status: 200, file: 'openai-error-429-insufficient-quota-2023.json', headers: { 'content-type': 'application/json' } });
    const error = await failureOf(kind);
    expect(error.code).toBe('provider_quota');
    expect(error.message).not.toMatch(/ended before the reply was complete/);
  });

  it('a web page says it was a web page, with its title', async () => {
    fake.script({
      kind: 'error',
      status: 200,
      body: '<!doctype html><html><head><title>Sign in to the Wi-Fi</title></head><body>…</body></html>',
      headers: { 'content-type': 'text/html' },
    });
    const error = await failureOf(kind);
    expect(error.code).toBe('provider_bad_response');
    expect(error.message).toMatch(/answered with a web page \(“Sign in to the Wi-Fi”\)/);
  });

  it('plain text is quoted, with the key kept out', async () => {
    fake.script({ kind: 'error', status: 200, body: 'upstream refused key sk-test-secret', headers: { 'content-type': 'text/plain' } });
    const error = await failureOf(kind);
    expect(error.code).toBe('provider_bad_response');
    expect(error.message).toMatch(/answered “upstream refused key .*” instead of a model reply/);
    expect(error.message).not.toContain('sk-test-secret');
  });

  it('a real stream cut short still says it ended early', async () => {
    fake.script({ kind: 'cut', text: 'Hello there' });
    const error = await failureOf(kind);
    expect(error.message).toMatch(/ended before the reply was complete/);
  });
});
