// For picture tests: one loopback Ollama for the whole file, offering a model that sees (llava:7b)
// and one that cannot (llama3.2:3b), both loaded with a 4,096-token window; the hosts a test starts
// are closed after it, and what the server saw is cleared.
import { afterAll, afterEach, beforeAll } from 'vitest';
import { serveOllama } from '../../../e2e/fake-llm/ollama.js';
import { startFakeLlm, type FakeLlm } from '../../../e2e/fake-llm/server.js';
import type { Host, HostOptions } from '../../host/types.js';
import { startTestHost } from '../../testing/host.js';
import { PATIENCE_MS } from '../../testing/patience.js';

export interface PictureModels {
  readonly fake: FakeLlm;
  /** A test host (a fresh data folder unless `options` names one), closed after the test. */
  host(options?: Partial<HostOptions>): Promise<Host>;
  /** Closes a host before the test ends (to read its folder), so it is not closed again after. */
  close(host: Host): Promise<void>;
}

export function usePictureModels(): PictureModels {
  const hosts: Host[] = [];
  let fake: FakeLlm;
  beforeAll(async () => {
    fake = await startFakeLlm({ defaultChunkDelayMs: 0 });
    fake.models = ['llava:7b', 'llama3.2:3b'];
    serveOllama(fake, {
      loaded: { 'llava:7b': 4096, 'llama3.2:3b': 4096 },
      show: { 'llava:7b': { capabilities: ['completion', 'vision'] }, 'llama3.2:3b': { capabilities: ['completion', 'tools'] } },
    });
  });
  afterAll(async () => {
    await fake.close();
  });
  afterEach(async () => {
    await Promise.all(hosts.splice(0).map((h) => h.close()));
    fake.reset();
  });
  return {
    get fake() {
      return fake;
    },
    async host(options = {}) {
      const h = await startTestHost({ providerTimeoutMs: PATIENCE_MS, ...options });
      hosts.push(h);
      return h;
    },
    async close(host) {
      await host.close();
      hosts.splice(hosts.indexOf(host), 1);
    },
  };
}
