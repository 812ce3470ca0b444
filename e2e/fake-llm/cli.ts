// Runs the fake model server on its own, to try the app by hand without a real model:
//   npx tsx e2e/fake-llm/cli.ts --port 8787
// then point a provider at the printed URL (OpenAI-compatible: URL/v1, Anthropic: URL).
import { parseArgs } from 'node:util';
import { startFakeLlm } from './server.js';

const { values } = parseArgs({ options: { port: { type: 'string', default: '0' } } });
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(`--port must be a port number, not "${values.port}"`);
  process.exit(2);
}

const fake = await startFakeLlm({ port });
console.log(`FAKE_LLM_URL=${fake.url}`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void fake.close().then(() => process.exit(0));
  });
}
