// Runs the fake model server on its own, to try the app by hand without a real model:
//   npx tsx e2e/fake-llm/cli.ts --port 8787 [--sleep] [--ollama]
// then point a provider at the printed URL (OpenAI-compatible: URL/v1, Anthropic: URL; with --ollama
// also Ollama's own API at URL, its /api/show reporting a 4,096-token model). With --sleep
// it also answers the sleep cycle's prompts (sleep-responder.ts); benchmarks run it this way, in its
// own process, so the fake model's work is not counted as the app's.
import { parseArgs } from 'node:util';
import { serveOllama } from './ollama.js';
import { startFakeLlm } from './server.js';
import { sleepResponder } from './sleep-responder.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    sleep: { type: 'boolean', default: false },
    ollama: { type: 'boolean', default: false },
    /** Pause between streamed chunks of sleep answers (a real model streams; a burst is not one). */
    'chunk-delay-ms': { type: 'string', default: '0' },
  },
});
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(`--port must be a port number, not "${values.port}"`);
  process.exit(2);
}

const fake = await startFakeLlm({ port, defaultChunkDelayMs: values.sleep ? 0 : undefined });
if (values.sleep) fake.respond = sleepResponder({ chunkDelayMs: Number(values['chunk-delay-ms']) || 0 });
if (values.ollama) serveOllama(fake);
console.log(`FAKE_LLM_URL=${fake.url}`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void fake.close().then(() => process.exit(0));
  });
}
