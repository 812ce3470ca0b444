// Ollama's native client against the loopback fake server speaking Ollama's dialect
// (e2e/fake-llm/ollama.ts) and replaying Ollama's documented streams from the wire fixtures.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm, type FakeResponse } from '../../e2e/fake-llm/server.js';
import { ollamaErrorLineReply, ollamaLengthReply, ollamaThinkingReply, serveOllama, type FakeOllama } from '../../e2e/fake-llm/ollama.js';
import { createProvider, ollamaBaseUrl, type ProviderOptions, type StreamRequest } from './index.js';
import { collect, reasoningOf, textOf } from './test-support.js';
import { PATIENCE_MS } from '../testing/patience.js';

let fake: FakeLlm;
let ollama: FakeOllama;

beforeEach(async () => {
  fake = await startFakeLlm({ defaultChunkDelayMs: 0 });
  // The model is loaded, unless a test says otherwise.
  ollama = serveOllama(fake, { loaded: { 'fake-model': 4096 } });
});
afterEach(async () => {
  await fake.close();
});

function provider(options: Partial<ProviderOptions> = {}) {
  return createProvider({ kind: 'ollama', baseUrl: fake.url, retryBaseMs: 5, timeoutMs: PATIENCE_MS, contextTokens: 4096, ...options });
}

const hello: StreamRequest = { model: 'fake-model', messages: [{ role: 'user', content: 'hello there' }] };
const chatBodies = () => fake.requests.filter((r) => r.path === '/api/chat').map((r) => r.body as Record<string, unknown>);

describe('request', () => {
  it('sends the conversation, tools, num_ctx, num_predict, temperature and keep_alive in Ollama’s shape', async () => {
    const request: StreamRequest = {
      model: 'fake-model',
      maxTokens: 256,
      temperature: 0.3,
      tools: [{ name: 'remember', description: 'Store a memory', parameters: { type: 'object', properties: { text: { type: 'string' } } } }],
      messages: [
        { role: 'system', content: 'You are Anima.' },
        { role: 'user', content: 'Remember my cat is Miso.', name: 'sam' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'remember', arguments: { text: 'cat: Miso' } }] },
        { role: 'tool', toolCallId: 'call_1', name: 'remember', content: 'stored' },
      ],
    };
    const { events, error } = await collect(provider().stream(request));
    expect(error).toBeUndefined();
    expect(events.at(-1)).toMatchObject({ type: 'done', finishReason: 'stop' });
    // First whether the model is loaded (a cold one gets longer for its first line), then the chat.
    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /api/ps', 'POST /api/chat']);
    const sent = fake.requests[1];
    expect(sent!.body).toEqual({
      model: 'fake-model',
      stream: true,
      keep_alive: '30m',
      options: { num_ctx: 4096, num_predict: 256, temperature: 0.3 },
      tools: [
        {
          type: 'function',
          function: { name: 'remember', description: 'Store a memory', parameters: { type: 'object', properties: { text: { type: 'string' } } } },
        },
      ],
      messages: [
        { role: 'system', content: 'You are Anima.' },
        { role: 'user', content: 'Remember my cat is Miso.' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', function: { index: 0, name: 'remember', arguments: { text: 'cat: Miso' } } }] },
        { role: 'tool', content: 'stored', tool_name: 'remember', tool_call_id: 'call_1' },
      ],
    });
  });

  it('asks for a JSON Schema through `format`, and for text alone by leaving the tools out', async () => {
    const schema = { type: 'object', properties: { age: { type: 'integer' } }, required: ['age'] };
    await collect(provider().stream({ ...hello, responseSchema: { name: 'facts', schema } }));
    const tools = [{ name: 'remember', description: 'd', parameters: { type: 'object' } }];
    await collect(provider().stream({ ...hello, tools, toolChoice: 'none' }));
    const [structured, textOnly] = chatBodies();
    expect(structured!.format).toEqual(schema);
    expect(textOnly!.tools).toBeUndefined();
  });

  it('takes the server root from any pasted address', () => {
    expect(ollamaBaseUrl('http://localhost:11434')).toBe('http://localhost:11434');
    expect(ollamaBaseUrl('http://localhost:11434/')).toBe('http://localhost:11434');
    expect(ollamaBaseUrl('http://127.0.0.1:11434/v1')).toBe('http://127.0.0.1:11434');
    expect(ollamaBaseUrl('http://127.0.0.1:11434/v1/chat/completions')).toBe('http://127.0.0.1:11434');
    expect(ollamaBaseUrl('http://127.0.0.1:11434/api/chat')).toBe('http://127.0.0.1:11434');
    expect(ollamaBaseUrl(' https://box.example/ollama/api ')).toBe('https://box.example/ollama');
  });

  it('reaches the server whichever form of its address was saved', async () => {
    const { events } = await collect(provider({ baseUrl: `${fake.url}/v1/` }).stream(hello));
    expect(textOf(events)).toBe('I hear you: hello there');
  });
});

describe('stream', () => {
  it('streams text and reports Ollama’s token counts', async () => {
    fake.script({ kind: 'text', text: 'The sky is blue.' });
    const { events, error } = await collect(provider().stream(hello));
    expect(error).toBeUndefined();
    expect(textOf(events)).toBe('The sky is blue.');
    expect(events.filter((e) => e.type === 'text').length).toBeGreaterThan(1);
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop', usage: { inputTokens: 2, outputTokens: 4 } });
  });

  it('turns `message.thinking` into reasoning', async () => {
    fake.script(ollamaThinkingReply('Blue light scatters more.', 'Because of Rayleigh scattering.'));
    const { events } = await collect(provider().stream(hello));
    expect(reasoningOf(events)).toBe('Blue light scatters more.');
    expect(textOf(events)).toBe('Because of Rayleigh scattering.');
  });

  it('emits a tool call with object arguments; the next request carries its result', async () => {
    fake.script({ kind: 'tool_call', name: 'remember', arguments: { text: 'cat: Miso', tags: ['pet'] }, thenText: 'Noted.' });
    const { events } = await collect(provider().stream(hello));
    expect(events.filter((e) => e.type === 'tool_call')).toEqual([
      { type: 'tool_call', call: { id: 'call_00000001', name: 'remember', arguments: { text: 'cat: Miso', tags: ['pet'] } } },
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'done', finishReason: 'tool_calls' });
    expect(textOf((await collect(provider().stream(hello))).events)).toBe('Noted.');
  });

  it('reads the documented tool-call stream (no id, done_reason "stop")', async () => {
    fake.script({ kind: 'fixture', file: 'ollama-api-chat-tool-call.ndjson' });
    const { events, error } = await collect(provider().stream(hello));
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: 'tool_call', call: { id: 'call_0', name: 'get_weather', arguments: { city: 'Tokyo' } } },
      { type: 'done', finishReason: 'tool_calls', usage: { inputTokens: 169, outputTokens: 15 } },
    ]);
  });

  it('says "length" when the model ran out of room', async () => {
    fake.script(ollamaLengthReply('cut short because'));
    const { events } = await collect(provider().stream(hello));
    expect(textOf(events)).toBe('cut short because');
    expect(events.at(-1)).toMatchObject({ type: 'done', finishReason: 'length' });
  });
});

describe('failures', () => {
  it('an error line after text is a server error, marked mid-stream, with the server’s words', async () => {
    fake.script(ollamaErrorLineReply('Yes I can', 'an error was encountered while running the model'));
    const { events, error } = await collect(provider().stream(hello));
    expect(textOf(events)).toBe('Yes I can');
    expect(error).toMatchObject({ code: 'provider_server_error', midStream: true });
    expect(error!.message).toContain('an error was encountered while running the model');
  });

  it('the documented mid-stream error capture fails the stream', async () => {
    fake.script({ kind: 'fixture', file: 'ollama-api-generate-midstream-error.ndjson' });
    const { error } = await collect(provider().stream(hello));
    expect(error).toMatchObject({ code: 'provider_server_error' });
  });

  it('a model the server does not have is named', async () => {
    const { error } = await collect(provider().stream({ ...hello, model: 'llama9' }));
    expect(error).toMatchObject({ code: 'provider_model_not_found', status: 404 });
    expect(error!.message).toContain('"llama9"');
  });

  it('a 400 in Ollama’s words (a model without tools) is a refusal that quotes it', async () => {
    fake.script({ kind: 'error', status: 400, body: JSON.stringify({ error: 'registry.ollama.ai/library/gemma:2b does not support tools' }) });
    const { error } = await collect(provider().stream(hello));
    expect(error).toMatchObject({ code: 'provider_bad_response', status: 400 });
    expect(error!.message).toContain('does not support tools');
  });

  it('a stream that stops without its done line is not a short answer', async () => {
    fake.script({ kind: 'cut', text: 'half an answer' });
    const { events, error } = await collect(provider().stream(hello));
    expect(textOf(events)).toBe('half an answer');
    expect(error).toMatchObject({ code: 'provider_bad_response', midStream: true });
  });

  it('a web page instead of a stream is described as one', async () => {
    fake.script({ kind: 'raw', contentType: 'text/html', writes: ['<html><head><title>Login</title></head></html>'] });
    const { error } = await collect(provider().stream(hello));
    expect(error).toMatchObject({ code: 'provider_bad_response' });
    expect(error!.message).toContain('Login');
  });
});

describe('a model still loading', () => {
  // Lines 600 ms apart, against a client that waits 250 ms for a byte.
  const slowReply = (): FakeResponse => ({ ...(ollamaThinkingReply('', 'slow but sure') as Extract<FakeResponse, { kind: 'raw' }>), delayMs: 600 });

  it('a model /api/ps does not list as loaded is said to be loading, and gets minutes, not the usual wait', async () => {
    ollama.loaded = {};
    fake.script(slowReply());
    const { events, error } = await collect(provider({ timeoutMs: 250 }).stream(hello));
    expect(error).toBeUndefined();
    expect(events[0]).toEqual({ type: 'status', status: 'loading_server_model', text: 'Loading the model on your server…' });
    expect(textOf(events)).toBe('slow but sure');
  });

  it('a loaded model gets the usual wait', async () => {
    fake.script(slowReply());
    const { error } = await collect(provider({ timeoutMs: 250 }).stream(hello));
    expect(error).toMatchObject({ code: 'provider_timeout' });
  });
});

describe('models', () => {
  it('lists the models from /api/tags', async () => {
    fake.models = ['llama3.2:latest', 'qwen3:8b'];
    expect(await provider().listModels()).toEqual(['llama3.2:latest', 'qwen3:8b']);
    expect(fake.requests.at(-1)).toMatchObject({ method: 'GET', path: '/api/tags' });
  });
});
