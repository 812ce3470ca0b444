// Every real wire capture in ../shared/fixtures/llm-wire, replayed by the loopback fake server
// (byte for byte, split across writes) through the real provider client that speaks it.
import fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FIXTURES_DIR, startFakeLlm, type FakeLlm } from '../../e2e/fake-llm/server.js';
import { errorFromStream } from './errors.js';
import { createProvider } from './index.js';
import { isRecord, parseToolArguments } from './json.js';
import { NdjsonParser } from './sse.js';
import { collect, reasoningOf, textOf, type Collected } from './test-support.js';
import type { ProviderKind } from '../../shared/api.js';

let fake: FakeLlm;
beforeEach(async () => {
  fake = await startFakeLlm();
});
afterEach(async () => {
  await fake.close();
});

async function replay(kind: ProviderKind, file: string): Promise<Collected> {
  fake.script({ kind: 'fixture', file });
  const provider = createProvider({ kind, baseUrl: fake.baseUrl, apiKey: 'sk-test', retryBaseMs: 5 });
  return collect(provider.stream({ model: 'fake-model', messages: [{ role: 'user', content: 'hi' }] }));
}

/** The fake's reply to a chat request, read the way a client reads it: one network chunk at a time. */
async function replayNdjson(file: string): Promise<unknown[]> {
  fake.script({ kind: 'fixture', file });
  const response = await fetch(`${fake.baseUrl}/chat/completions`, {
    method: 'POST',
    body: JSON.stringify({ model: 'fake-model', stream: true, messages: [] }),
  });
  const parser = new NdjsonParser();
  const lines: string[] = [];
  for await (const chunk of response.body!) lines.push(...parser.push(chunk));
  lines.push(...parser.end());
  return lines.map((line) => JSON.parse(line) as unknown);
}

const expectations: Record<string, () => Promise<void>> = {
  'openai-chat-text.sse': async () => {
    const { events, error } = await replay('openai-compatible', 'openai-chat-text.sse');
    expect(error).toBeUndefined();
    expect(textOf(events)).toBe(
      "I'm unable to provide real-time weather updates. To get the current weather in San Francisco, I recommend checking a reliable weather website or a weather app.",
    );
    // The role chunk's content:"" yields nothing; each of the 30 content deltas yields one event.
    expect(events.filter((e) => e.type === 'text')).toHaveLength(30);
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop', usage: { inputTokens: 14, outputTokens: 30 } });
    expect(events).toHaveLength(31);
  },

  'openai-chat-text-include-usage-2026.trimmed.sse': async () => {
    const { events, error } = await replay('openai-compatible', 'openai-chat-text-include-usage-2026.trimmed.sse');
    expect(error).toBeUndefined();
    expect(textOf(events)).toBe('**Holiday Name:** Harmony.');
    // usage:null on every chunk is not usage; the final choices:[] chunk is.
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop', usage: { inputTokens: 16, outputTokens: 300 } });
    expect(events).toHaveLength(7);
  },

  'openai-chat-tool-call.sse': async () => {
    const { events, error } = await replay('openai-compatible', 'openai-chat-tool-call.sse');
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: 'tool_call', call: { id: 'call_4XzlGBLtUe9dy3GVNV4jhq7h', name: 'get_weather', arguments: { city: 'New York City' } } },
      { type: 'done', finishReason: 'tool_calls', usage: { inputTokens: 44, outputTokens: 16 } },
    ]);
  },

  'openai-chat-parallel-tool-calls.sse': async () => {
    const { events, error } = await replay('openai-compatible', 'openai-chat-parallel-tool-calls.sse');
    expect(error).toBeUndefined();
    expect(events).toEqual([
      {
        type: 'tool_call',
        call: { id: 'call_JMW1whyEaYG438VE1OIflxA2', name: 'GetWeatherArgs', arguments: { city: 'Edinburgh', country: 'GB', units: 'c' } },
      },
      {
        type: 'tool_call',
        call: { id: 'call_DNYTawLBoN8fj3KN6qU9N1Ou', name: 'get_stock_price', arguments: { ticker: 'AAPL', exchange: 'NASDAQ' } },
      },
      { type: 'done', finishReason: 'tool_calls', usage: { inputTokens: 149, outputTokens: 60 } },
    ]);
  },

  'ollama-openai-compat-tool-calls.sse': async () => {
    const { events, error } = await replay('openai-compatible', 'ollama-openai-compat-tool-calls.sse');
    expect(error).toBeUndefined();
    // Whole calls in one chunk each, role and content:"" repeated on every delta, no usage chunk.
    expect(events).toEqual([
      { type: 'tool_call', call: { id: 'call_809l7n8f', name: 'run_command', arguments: { command: 'ls -la' } } },
      {
        type: 'tool_call',
        call: { id: 'call_oqp1e2a1', name: 'run_command', arguments: { command: 'ls -la', cwd: '/path/to/directory' } },
      },
      { type: 'done', finishReason: 'tool_calls' },
    ]);
    expect(events.at(-1)).not.toHaveProperty('usage');
  },

  'llamacpp-reasoning-content.trimmed.sse': async () => {
    const { events, error } = await replay('openai-compatible', 'llamacpp-reasoning-content.trimmed.sse');
    expect(error).toBeUndefined();
    expect(events.map((e) => e.type)).toEqual([...Array<string>(14).fill('reasoning'), ...Array<string>(10).fill('text'), 'done']);
    expect(reasoningOf(events)).toBe('Hmm, the user just said "hi" \n\nA initial contact.');
    // The emoji is raw UTF-8 and the replay splits the body mid-stream: it must arrive whole.
    expect(textOf(events)).toBe('Hello! How can I help you today? 😊');
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop', usage: { inputTokens: 5, outputTokens: 117 } });
  },

  'llamacpp-tool-call.sse': async () => {
    // The capture ends at the finish chunk, with no [DONE]: a finish_reason makes it complete.
    const { events, error } = await replay('openai-compatible', 'llamacpp-tool-call.sse');
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: 'tool_call', call: { id: 'v2dhUNilw8En9qFqCAHEz5Ow0GnQsclc', name: 'run_command', arguments: { command: 'pwd' } } },
      { type: 'done', finishReason: 'tool_calls' },
    ]);
  },

  'llamacpp-midstream-error-legacy.sse': async () => {
    // A non-standard `error:` field with HTTP 200, then [DONE]: a failure, not an empty success.
    const { events, error } = await replay('openai-compatible', 'llamacpp-midstream-error-legacy.sse');
    expect(events).toEqual([]);
    expect(error).toMatchObject({ code: 'provider_context_overflow', status: 400, midStream: false });
    expect(error?.message).toBe(
      "This conversation is too long for the model's context window. Start a new conversation, or choose a model with a larger context window in Settings.",
    );
  },

  'vllm-tool-call.sse': async () => {
    // model:"", a first fragment without `arguments`, a finish chunk with content:"" and stop_reason.
    const { events, error } = await replay('openai-compatible', 'vllm-tool-call.sse');
    expect(error).toBeUndefined();
    expect(events).toEqual([
      {
        type: 'tool_call',
        call: { id: 'chatcmpl-tool-ca99dda515524c6abe47d1ea22813507', name: 'run_command', arguments: { command: 'ls' } },
      },
      { type: 'done', finishReason: 'tool_calls' },
    ]);
  },

  'anthropic-messages-text.sse': async () => {
    const { events, error } = await replay('anthropic', 'anthropic-messages-text.sse');
    expect(error).toBeUndefined();
    expect(textOf(events)).toBe("Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?");
    expect(events.filter((e) => e.type === 'text')).toHaveLength(6);
    // message_delta usage is a total: 30, not 1 + 30.
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop', usage: { inputTokens: 12, outputTokens: 30 } });
    expect(events).toHaveLength(7);
  },

  'anthropic-messages-tool-use.sse': async () => {
    const { events, error } = await replay('anthropic', 'anthropic-messages-tool-use.sse');
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: 'text', text: 'I' },
      { type: 'text', text: "'ll check the current weather in Paris for you." },
      { type: 'tool_call', call: { id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', name: 'get_weather', arguments: { location: 'Paris' } } },
      { type: 'done', finishReason: 'tool_calls', usage: { inputTokens: 377, outputTokens: 65 } },
    ]);
  },

  'anthropic-error-overloaded.sse': async () => {
    const { events, error } = await replay('anthropic', 'anthropic-error-overloaded.sse');
    expect(events).toEqual([]);
    expect(error).toMatchObject({ code: 'provider_server_error', midStream: false });
    expect(error?.message).toBe(`The model server at ${new URL(fake.url).host} is overloaded right now. Try again in a moment.`);
  },

  'openai-error-401-invalid-api-key.json': async () => {
    fake.script({ kind: 'error', status: 401, file: 'openai-error-401-invalid-api-key.json' });
    const provider = createProvider({ kind: 'openai-compatible', baseUrl: fake.baseUrl, apiKey: 'sk-svcac-secret', retryBaseMs: 5 });
    const { events, error } = await collect(provider.stream({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }));
    expect(events).toEqual([]);
    expect(error).toMatchObject({ code: 'provider_auth', status: 401, midStream: false });
    // The server's text quotes part of the key, so it is not repeated.
    expect(error?.message).toBe(`The model server at ${new URL(fake.url).host} didn't accept the API key. Check the key in Settings → Providers.`);
    expect(fake.requests).toHaveLength(1); // auth errors are not retried
  },

  'openai-error-429-insufficient-quota-2023.json': async () => {
    fake.script({ kind: 'error', status: 429, file: 'openai-error-429-insufficient-quota-2023.json' });
    const provider = createProvider({ kind: 'openai-compatible', baseUrl: fake.baseUrl, apiKey: 'sk-test', retryBaseMs: 5 });
    const { error } = await collect(provider.stream({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }));
    // A 429 that is not a rate limit: waiting will not help, so no retry.
    expect(error).toMatchObject({ code: 'provider_quota', status: 429 });
    expect(error?.message).toBe(`Your account at ${new URL(fake.url).host} has run out of credit or quota. Check your plan and billing with the provider.`);
    expect(fake.requests).toHaveLength(1);
  },

  // No client speaks Ollama's native /api/chat (the app uses Ollama's OpenAI-compatible API), so
  // these are read with the NDJSON parser and the helpers the clients share.
  'ollama-api-chat-tool-call.ndjson': async () => {
    const [first, last, ...rest] = await replayNdjson('ollama-api-chat-tool-call.ndjson');
    expect(rest).toEqual([]);
    const message = isRecord(first) && isRecord(first.message) ? first.message : {};
    const [call] = message.tool_calls as { function: { name: string; arguments: unknown } }[];
    // Arguments arrive as an object, not a JSON string.
    expect(parseToolArguments(call!.function.arguments, call!.function.name)).toEqual({ city: 'Tokyo' });
    expect(last).toMatchObject({ done: true, done_reason: 'stop', eval_count: 15, prompt_eval_count: 169 });
  },

  'ollama-api-generate-midstream-error.ndjson': async () => {
    const lines = await replayNdjson('ollama-api-generate-midstream-error.ndjson');
    expect(
      lines
        .slice(0, 4)
        .map((line) => (line as { response: string }).response)
        .join(''),
    ).toBe(' Yes.Ican');
    // A bare {"error":"…"} string after tokens, with no done:true line: a server failure.
    const error = errorFromStream(lines[4], { host: '127.0.0.1:11434' });
    expect(error.code).toBe('provider_server_error');
    expect(error.message).toBe(
      'The model server at 127.0.0.1:11434 reported an error while answering. It said: "an error was encountered while running the model"',
    );
    expect(lines).toHaveLength(5);
  },
};

describe('real wire captures', () => {
  it('covers every fixture file', () => {
    const files = fs.readdirSync(FIXTURES_DIR).filter((file) => file !== 'README.md');
    expect(Object.keys(expectations).sort()).toEqual(files.sort());
  });

  for (const [file, check] of Object.entries(expectations)) {
    it(`replays ${file}`, check);
  }
});
