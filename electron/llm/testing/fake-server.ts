// For the provider tests: each test gets its own loopback fake model server, and the host:port that
// error messages name it by; after the test the server closes and the made-up wire files go.
import { afterEach, beforeEach } from 'vitest';
import { startFakeLlm, type FakeLlm } from '../../../e2e/fake-llm/server.js';
import { removeWireFiles } from '../test-support.js';

export interface FakeServer {
  fake: FakeLlm;
  /** As the provider's messages name the server: `127.0.0.1:<port>`. */
  host: string;
}

export function useFakeServer(): FakeServer {
  const server = {} as FakeServer;
  beforeEach(async () => {
    server.fake = await startFakeLlm({ defaultChunkDelayMs: 0 });
    server.host = new URL(server.fake.url).host;
  });
  afterEach(async () => {
    await server.fake.close();
    removeWireFiles();
  });
  return server;
}
