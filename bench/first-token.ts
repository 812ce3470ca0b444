// First-token overhead: how much time the app adds before the first streamed token reaches the UI,
// on top of what the provider itself takes. Both paths hit the same loopback fake model server:
//   provider alone  — the HTTP client's stream() until its first text event
//   through the app — chat.send (store the message, build the prompt, fit the context, call the
//                     provider) until the first chat.delta event
// The same again over Ollama's own API (`/api/chat`, NDJSON, num_ctx from the server's window that
// /api/show reports), keys prefixed `ollama_`.
//   npm run bench:first-token [-- --runs 30]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { serveOllama } from '../e2e/fake-llm/ollama.js';
import { startFakeLlm } from '../e2e/fake-llm/server.js';
import { createHost } from '../electron/host/index.js';
import { createProvider } from '../electron/llm/index.js';
import type { Message } from '../shared/api.js';
import { median, percentile, report, round } from './util.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '30' } } });
const runs = Number(values.runs);
const fake = await startFakeLlm();
fake.defaultChunkDelayMs = 0;
serveOllama(fake);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-bench-ftt-'));
const host = await createHost({ dataDir, log: () => {}, detectLocalServers: false });
const openAi = await host.api['providers.save']({ kind: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, model: 'fake-model' });
const ollama = await host.api['providers.save']({ kind: 'ollama', name: 'Fake Ollama', baseUrl: fake.url, model: 'fake-model' });
let provider = createProvider({ kind: 'openai-compatible', baseUrl: fake.baseUrl });

async function providerAlone(): Promise<number> {
  const t0 = performance.now();
  let first = 0;
  for await (const event of provider.stream({ model: 'fake-model', messages: [{ role: 'user', content: 'hello there' }] })) {
    if (event.type === 'text' && !first) first = performance.now() - t0;
  }
  return first;
}

async function throughApp(conversationId: string): Promise<number> {
  let first = 0;
  const t0 = performance.now();
  const finished = new Promise<void>((resolve) => {
    const off = host.on((event, payload) => {
      if (event === 'chat.delta' && !first) first = performance.now() - t0;
      if (event === 'chat.finished' && (payload as { message: Message }).message) {
        off();
        resolve();
      }
    });
  });
  await host.api['chat.send']({ conversationId, content: 'hello there' });
  await finished;
  return first;
}

/** Warms both paths (JIT, connection pools, the prompt snapshot), then measures `runs` pairs. */
async function measure(): Promise<{ alone: number[]; app: number[]; overhead: number[] }> {
  const warm = await host.api['conversations.create']({});
  for (let i = 0; i < 3; i++) {
    await providerAlone();
    await throughApp(warm.id);
  }
  const alone: number[] = [];
  const app: number[] = [];
  const overhead: number[] = [];
  for (let i = 0; i < runs; i++) {
    // A fresh conversation each run measures the first message of a chat, the worst case
    // (auto-title and a freshly built system prompt included).
    const conversation = await host.api['conversations.create']({});
    const a = await providerAlone();
    const b = await throughApp(conversation.id);
    alone.push(a);
    app.push(b);
    overhead.push(b - a);
  }
  return { alone, app, overhead };
}

await host.api['settings.update']({ chatProviderId: openAi.id });
const { alone, app, overhead } = await measure();
// Ollama's own API: the client the app resolves for it (num_ctx from /api/show's window).
await host.api['settings.update']({ chatProviderId: ollama.id });
provider = createProvider({ kind: 'ollama', baseUrl: fake.url, contextTokens: 4096 });
const native = await measure();

await host.close();
await fake.close();
fs.rmSync(dataDir, { recursive: true, force: true });

report('first-token', {
  benchmark: 'time the app adds before the first streamed token',
  runs,
  provider_first_token_ms_median: round(median(alone), 2),
  app_first_token_ms_median: round(median(app), 2),
  first_token_overhead_ms_median: round(median(overhead), 2),
  first_token_overhead_ms_p95: round(percentile(overhead, 95), 2),
  ollama_provider_first_token_ms_median: round(median(native.alone), 2),
  ollama_app_first_token_ms_median: round(median(native.app), 2),
  ollama_first_token_overhead_ms_median: round(median(native.overhead), 2),
  ollama_first_token_overhead_ms_p95: round(percentile(native.overhead, 95), 2),
  target_overhead_ms: 50,
  node: process.version,
  cpus: os.cpus().length,
});
