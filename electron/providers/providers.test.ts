// A saved API key goes only to the server it was saved for: through the real host, the real HTTP
// clients and two loopback fake servers, one the key belongs to and one that should never see it.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm } from '../../e2e/fake-llm/server.js';
import { startTestHost } from '../testing/host.js';
import type { Host } from '../host/types.js';

let owner: FakeLlm;
let stranger: FakeLlm;
const hosts: Host[] = [];

beforeAll(async () => {
  [owner, stranger] = await Promise.all([startFakeLlm(), startFakeLlm()]);
  owner.apiKey = 'sk-saved-secret';
});
afterAll(async () => {
  await Promise.all([owner.close(), stranger.close()]);
});
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
  // A test that failed halfway leaves no replies queued for the next.
  owner.reset();
  stranger.reset();
});

async function hostWithSavedKey() {
  const host = await startTestHost();
  hosts.push(host);
  const saved = await host.api['providers.save']({
    kind: 'openai-compatible',
    name: 'Mine',
    baseUrl: owner.baseUrl,
    model: 'fake-model',
    apiKey: 'sk-saved-secret',
  });
  // Saving asked the server about its model, with the key; what follows starts from a clean record.
  expect(sawKey(owner)).toBe(true);
  owner.requests.length = 0;
  return { host, saved };
}

const sawKey = (fake: FakeLlm) => fake.requests.some((r) => JSON.stringify(r.headers).includes('sk-saved-secret'));

describe('a saved key stays with its server', () => {
  it('tests a saved connection at its own address with the saved key', async () => {
    const { host, saved } = await hostWithSavedKey();
    const result = await host.api['providers.test']({ id: saved.id, kind: 'openai-compatible', baseUrl: owner.baseUrl, model: 'fake-model' });
    expect(result.ok).toBe(true);
    expect(sawKey(owner)).toBe(true);
    // Another path on the same origin is the same server.
    expect((await host.api['providers.test']({ id: saved.id, kind: 'openai-compatible', baseUrl: `${owner.url}/v1/`, model: 'fake-model' })).ok).toBe(true);
  });

  it('refuses to send the saved key to another address, and sends nothing there', async () => {
    const { host, saved } = await hostWithSavedKey();
    await expect(host.api['providers.test']({ id: saved.id, kind: 'openai-compatible', baseUrl: stranger.baseUrl, model: 'fake-model' })).rejects.toMatchObject(
      {
        code: 'invalid_input',
        field: 'apiKey',
      },
    );
    await expect(host.api['providers.test']({ id: saved.id, kind: 'anthropic', baseUrl: owner.url, model: 'fake-model' })).rejects.toMatchObject({
      field: 'apiKey',
    });
    expect(stranger.requests).toHaveLength(0);
    expect(sawKey(owner)).toBe(false);
  });

  it('"remove the key" tests without any key, wherever it points', async () => {
    const { host, saved } = await hostWithSavedKey();
    const result = await host.api['providers.test']({ id: saved.id, kind: 'openai-compatible', baseUrl: stranger.baseUrl, model: 'fake-model', apiKey: '' });
    expect(result.ok).toBe(true);
    expect(stranger.requests.length).toBeGreaterThan(0);
    expect(sawKey(stranger)).toBe(false);
  });

  it('a key typed for the new address is used there', async () => {
    const { host, saved } = await hostWithSavedKey();
    const result = await host.api['providers.test']({
      id: saved.id,
      kind: 'openai-compatible',
      baseUrl: stranger.baseUrl,
      model: 'fake-model',
      apiKey: 'sk-other',
    });
    expect(result.ok).toBe(true);
    expect(stranger.requests.some((r) => JSON.stringify(r.headers).includes('sk-other'))).toBe(true);
    expect(sawKey(stranger)).toBe(false);
  });

  it('moving a saved connection to another server without a new key is refused and changes nothing', async () => {
    const { host, saved } = await hostWithSavedKey();
    await expect(
      host.api['providers.save']({ id: saved.id, kind: 'openai-compatible', name: 'Mine', baseUrl: stranger.baseUrl, model: 'fake-model' }),
    ).rejects.toMatchObject({ code: 'invalid_input', field: 'apiKey' });
    const [after] = await host.api['providers.list']({});
    expect(after).toMatchObject({ id: saved.id, baseUrl: owner.baseUrl, hasApiKey: true });
    // With the key given again (or removed) the move is allowed.
    const moved = await host.api['providers.save']({
      id: saved.id,
      kind: 'openai-compatible',
      name: 'Mine',
      baseUrl: stranger.baseUrl,
      model: 'fake-model',
      apiKey: '',
    });
    expect(moved).toMatchObject({ baseUrl: stranger.baseUrl, hasApiKey: false });
    // Renaming it at the same address keeps the key without asking again.
    const renamed = await host.api['providers.save']({
      id: saved.id,
      kind: 'openai-compatible',
      name: 'Renamed',
      baseUrl: stranger.baseUrl,
      model: 'fake-model',
    });
    expect(renamed.name).toBe('Renamed');
  });
});
