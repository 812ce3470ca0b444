// The OpenAI-compatible client against the loopback fake server: request shape, quirks the
// captures describe but do not contain, failures, retries, timeouts and cancellation.
import { describe, expect, it } from 'vitest';
import { createProvider, openAiBaseUrl, ProviderError, type ProviderOptions, type StreamRequest } from './index.js';
import { limitField } from './openai-compatible.js';
import { closedPort, collect, sse, textOf, wireFile } from './test-support.js';
import { PATIENCE_MS } from '../testing/patience.js';
import { useFakeServer } from './testing/fake-server.js';

const KEY = 'sk-test-0123456789abcdef';
const server = useFakeServer();

function provider(options: Partial<ProviderOptions> = {}) {
  return createProvider({ kind: 'openai-compatible', baseUrl: server.fake.baseUrl, apiKey: KEY, retryBaseMs: 5, timeoutMs: PATIENCE_MS, ...options });
}

const hello: StreamRequest = { model: 'fake-model', messages: [{ role: 'user', content: 'hello there' }] };

/** Replays a made-up SSE body (for quirks reported in the fixtures README but not captured). */
function replayWire(body: string, options: Partial<ProviderOptions> = {}) {
  server.fake.script({ kind: 'fixture', file: wireFile('made-up.sse', body) });
  return collect(provider(options).stream(hello));
}

const chunk = (delta: object, finish: string | null = null, extra: object = {}) => ({
  id: 'x',
  object: 'chat.completion.chunk',
  choices: [{ index: 0, delta, finish_reason: finish }],
  ...extra,
});

describe('request', () => {
  it('sends the conversation, tools and options in the OpenAI format', async () => {
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
        { role: 'assistant', content: 'Earlier memories.', name: 'passive_memory_context' },
      ],
    };
    const { events } = await collect(provider().stream(request));
    expect(events.at(-1)).toMatchObject({ type: 'done', finishReason: 'stop' });
    const [sent] = server.fake.requests;
    expect(sent!.method).toBe('POST');
    expect(sent!.path).toBe('/v1/chat/completions');
    expect(sent!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent!.headers['content-type']).toBe('application/json');
    expect(sent!.body).toEqual({
      model: 'fake-model',
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 256,
      temperature: 0.3,
      tools: [
        {
          type: 'function',
          function: { name: 'remember', description: 'Store a memory', parameters: { type: 'object', properties: { text: { type: 'string' } } } },
        },
      ],
      messages: [
        { role: 'system', content: 'You are Anima.' },
        { role: 'user', content: 'Remember my cat is Miso.', name: 'sam' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'remember', arguments: '{"text":"cat: Miso"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'stored' },
        { role: 'assistant', content: 'Earlier memories.', name: 'passive_memory_context' },
      ],
    });
  });

  it('sends no tools, limits or key when there are none', async () => {
    await collect(provider({ apiKey: undefined }).stream(hello));
    const [sent] = server.fake.requests;
    expect(sent!.headers.authorization).toBeUndefined();
    expect(Object.keys(sent!.body as object).sort()).toEqual(['messages', 'model', 'stream', 'stream_options']);
  });

  it('adds /v1 to an address without a path and trims a pasted endpoint', async () => {
    for (const baseUrl of [server.fake.url, `${server.fake.url}/`, `${server.fake.baseUrl}/`, `${server.fake.baseUrl}/chat/completions`]) {
      const { events } = await collect(provider({ baseUrl }).stream(hello));
      expect(textOf(events)).toBe('I hear you: hello there');
    }
    expect(server.fake.requests.map((r) => r.path)).toEqual(Array(4).fill('/v1/chat/completions'));
    expect(openAiBaseUrl('https://openrouter.ai/api/v1')).toBe('https://openrouter.ai/api/v1');
    expect(openAiBaseUrl('https://api.groq.com/openai/v1/')).toBe('https://api.groq.com/openai/v1');
    expect(openAiBaseUrl(' http://127.0.0.1:11434 ')).toBe('http://127.0.0.1:11434/v1');
  });

  it('explains an address that is not a URL', async () => {
    const { error } = await collect(provider({ baseUrl: 'localhost 11434' }).stream(hello));
    expect(error).toMatchObject({ code: 'provider_unreachable' });
    expect(error?.message).toBe(`"localhost 11434" isn't a valid server address. It should look like http://127.0.0.1:11434.`);
  });
});

describe('streaming', () => {
  it('streams scripted text in the chunks the server sent, with usage', async () => {
    server.fake.script({ kind: 'text', text: 'Hello there, I remember you.', chunks: 3 });
    const { events, error } = await collect(provider().stream(hello));
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: 'text', text: 'Hello' },
      { type: 'text', text: ' there, I' },
      { type: 'text', text: ' remember you.' },
      { type: 'done', finishReason: 'stop', usage: { inputTokens: 2, outputTokens: 3 } },
    ]);
  });

  it('yields a scripted tool call, then the scripted answer to its result', async () => {
    server.fake.script({ kind: 'tool_call', name: 'memory_recall', arguments: { query: 'cat "name"', limit: 3 }, thenText: 'Your cat is Miso.' });
    const first = await collect(provider().stream(hello));
    expect(first.events).toEqual([
      { type: 'tool_call', call: { id: 'call_000000000000000000000001', name: 'memory_recall', arguments: { query: 'cat "name"', limit: 3 } } },
      { type: 'done', finishReason: 'tool_calls', usage: { inputTokens: 2, outputTokens: 4 } },
    ]);
    const second = await collect(provider().stream(hello));
    expect(textOf(second.events)).toBe('Your cat is Miso.');
  });

  it('reads reasoning sent as `reasoning` (Ollama) before the answer', async () => {
    const { events } = await replayWire(
      sse(
        chunk({ role: 'assistant', content: '', reasoning: 'Thinking' }),
        chunk({ reasoning: ' hard' }),
        chunk({ content: 'Hi' }),
        chunk({}, 'stop'),
        '[DONE]',
      ),
    );
    expect(events).toEqual([
      { type: 'reasoning', text: 'Thinking' },
      { type: 'reasoning', text: ' hard' },
      { type: 'text', text: 'Hi' },
      { type: 'done', finishReason: 'stop' },
    ]);
  });

  it('keys interleaved fragments by index, keeping the first id and name when later ones repeat them', async () => {
    const fragment = (index: number, args: string, head?: { id: string; name: string }) => ({
      index,
      ...(head ? { id: head.id, type: 'function' } : {}),
      function: { ...(head ? { name: head.name } : {}), arguments: args },
    });
    const { events } = await replayWire(
      sse(
        chunk({ tool_calls: [fragment(0, '{"a"', { id: 'c0', name: 'first' }), fragment(1, '{"b"', { id: 'c1', name: 'second' })] }),
        chunk({ tool_calls: [fragment(1, ': 2}')] }),
        chunk({ tool_calls: [fragment(0, ': 1}', { id: 'c0', name: 'first' })] }),
        chunk({}, 'tool_calls'),
        '[DONE]',
      ),
    );
    expect(events).toEqual([
      { type: 'tool_call', call: { id: 'c0', name: 'first', arguments: { a: 1 } } },
      { type: 'tool_call', call: { id: 'c1', name: 'second', arguments: { b: 2 } } },
      { type: 'done', finishReason: 'tool_calls' },
    ]);
  });

  it('reads whole tool calls without an index (Mistral) and usage on the finish chunk', async () => {
    const calls = [
      { id: 'abc123XYZ', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } },
      { id: 'def456UVW', function: { name: 'get_time', arguments: '{}' } },
    ];
    const { events } = await replayWire(
      sse(chunk({ role: 'assistant', content: '', tool_calls: calls }, 'tool_calls', { usage: { prompt_tokens: 5, completion_tokens: 7 } }), '[DONE]'),
    );
    expect(events).toEqual([
      { type: 'tool_call', call: { id: 'abc123XYZ', name: 'get_weather', arguments: { city: 'Paris' } } },
      { type: 'tool_call', call: { id: 'def456UVW', name: 'get_time', arguments: {} } },
      { type: 'done', finishReason: 'tool_calls', usage: { inputTokens: 5, outputTokens: 7 } },
    ]);
  });

  it('separates calls that all say index 0 (Ollama) and reports tool_calls despite finish_reason stop', async () => {
    const call = (id: string, command: string) => ({ index: 0, id, type: 'function', function: { name: 'run', arguments: JSON.stringify({ command }) } });
    const { events } = await replayWire(
      sse(chunk({ tool_calls: [call('call_a', 'ls')] }), chunk({ tool_calls: [call('call_b', 'pwd')] }), chunk({}, 'stop'), '[DONE]'),
    );
    expect(events).toEqual([
      { type: 'tool_call', call: { id: 'call_a', name: 'run', arguments: { command: 'ls' } } },
      { type: 'tool_call', call: { id: 'call_b', name: 'run', arguments: { command: 'pwd' } } },
      { type: 'done', finishReason: 'tool_calls' },
    ]);
  });

  it('accepts arguments sent as an object, and gives id-less calls an id', async () => {
    const { events } = await replayWire(
      sse(chunk({ tool_calls: [{ index: 0, function: { name: 'get_weather', arguments: { city: 'Tokyo' } } }] }, 'tool_calls'), '[DONE]'),
    );
    expect(events[0]).toEqual({ type: 'tool_call', call: { id: 'call_0', name: 'get_weather', arguments: { city: 'Tokyo' } } });
  });

  it('fails on tool arguments that are not valid JSON', async () => {
    const { events, error } = await replayWire(
      sse(chunk({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'remember', arguments: '{"text": "unfinished' } }] }, 'length'), '[DONE]'),
    );
    expect(events).toEqual([]);
    expect(error).toMatchObject({ code: 'provider_bad_response', midStream: false });
    expect(error?.message).toBe(`The model tried to use the tool "remember" but sent arguments that aren't valid JSON.`);
  });

  it('reads CRLF framing, data: without a space, comments, unknown keys and events', async () => {
    const body =
      ': OPENROUTER PROCESSING\r\n\r\n' +
      'event: message\r\ndata:' +
      JSON.stringify(chunk({ role: 'assistant', content: 'Hel' }, null, { obfuscation: 'Qup1', __verbose: { a: 1 }, usage: null })) +
      '\r\n\r\ndata: ' +
      JSON.stringify(chunk({ content: 'lo' }, 'stop', { timings: { cache_n: 0 } })) +
      '\r\n\r\ndata: [DONE]\r\n\r\n';
    const { events, error } = await replayWire(body);
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: 'text', text: 'Hel' },
      { type: 'text', text: 'lo' },
      { type: 'done', finishReason: 'stop' },
    ]);
  });

  it('treats [DONE] without a finish_reason as a complete answer', async () => {
    const { events } = await replayWire(sse(chunk({ content: 'ok' }), '[DONE]'));
    expect(events).toEqual([
      { type: 'text', text: 'ok' },
      { type: 'done', finishReason: 'stop' },
    ]);
  });
});

describe('failures inside a stream', () => {
  it('fails when the stream ends without [DONE] or a finish_reason, after yielding the partial text', async () => {
    const { events, error } = await replayWire(sse(chunk({ role: 'assistant', content: '' }), chunk({ content: 'I was' }), chunk({ content: ' saying' })));
    expect(textOf(events)).toBe('I was saying');
    expect(events.some((e) => e.type === 'done')).toBe(false);
    expect(error).toMatchObject({ code: 'provider_bad_response', midStream: true });
    expect(error?.message).toBe(`The connection to ${server.host} ended before the reply was complete.`);
  });

  it('fails on a cut connection with midStream set, after the text that arrived', async () => {
    server.fake.script({ kind: 'cut', text: 'I was saying something important when' });
    const { events, error } = await collect(provider().stream(hello));
    expect(textOf(events)).toBe('I was saying something important when');
    expect(error).toMatchObject({ code: 'provider_bad_response', midStream: true });
    expect(error?.message).toBe(`The connection to ${server.host} ended before the reply was complete.`);
  });

  it('fails on an empty 200 reply without midStream', async () => {
    const { events, error } = await replayWire('');
    expect(events).toEqual([]);
    expect(error).toMatchObject({ code: 'provider_bad_response', midStream: false });
  });

  it('fails on a chunk that is not JSON', async () => {
    const { error } = await replayWire(sse(chunk({ content: 'a' }), '{"choices": [{"delta": {"content": "b"'));
    expect(error).toMatchObject({ code: 'provider_bad_response', midStream: true });
    expect(error?.message).toBe(`The model server at ${server.host} sent a reply Anima couldn't read (it wasn't valid JSON).`);
  });

  it('maps a data: {"error": …} event after text (llama.cpp since #16109, OpenRouter)', async () => {
    const { events, error } = await replayWire(
      sse(chunk({ content: 'Partial' }), { error: { code: 500, message: 'CUDA error: out of memory', type: 'server_error' } }),
    );
    expect(textOf(events)).toBe('Partial');
    expect(error).toMatchObject({ code: 'provider_server_error', status: 500, midStream: true });
    expect(error?.message).toBe(
      `The model server at ${server.host} ran into a problem (HTTP 500). Try again in a moment. It said: "CUDA error: out of memory"`,
    );
  });

  it('maps an error with finish_reason "error" by its code (OpenRouter rate limit)', async () => {
    const { error } = await replayWire(sse(chunk({ content: '' }, 'error', { error: { code: 429, message: 'Rate limit exceeded: free-models-per-min' } })));
    expect(error).toMatchObject({ code: 'provider_rate_limited', status: 429, midStream: false });
  });

  it('maps a string error (Ollama) and a vLLM error object', async () => {
    const ollama = await replayWire(sse({ error: 'an error was encountered while running the model' }));
    expect(ollama.error).toMatchObject({ code: 'provider_server_error' });
    expect(ollama.error?.message).toBe(
      `The model server at ${server.host} reported an error while answering. It said: "an error was encountered while running the model"`,
    );
    const vllm = await replayWire(sse({ object: 'error', message: "This model's maximum context length is 4096 tokens.", type: 'BadRequestError', code: 400 }));
    expect(vllm.error).toMatchObject({ code: 'provider_context_overflow', status: 400 });
  });
});

describe('HTTP errors and retries', () => {
  it('rejects a wrong key with a real-shaped 401, without retrying or quoting the key', async () => {
    server.fake.apiKey = 'the-right-key';
    const { error } = await collect(provider({ apiKey: 'the-wrong-key' }).stream(hello));
    expect(error).toMatchObject({ code: 'provider_auth', status: 401 });
    expect(server.fake.requests).toHaveLength(1);
    const { events } = await collect(provider({ apiKey: 'the-right-key' }).stream(hello));
    expect(textOf(events)).toBe('I hear you: hello there');
  });

  it('never repeats the API key from a server message', async () => {
    server.fake.script({ kind: 'error', status: 400, body: JSON.stringify({ error: { message: `Key ${KEY} is not valid for this org` } }) });
    const { error } = await collect(provider().stream(hello));
    expect(error).toMatchObject({ code: 'provider_bad_response', status: 400 });
    expect(error?.message).toBe(`The model server at ${server.host} refused the request (HTTP 400). It said: "Key [API key] is not valid for this org"`);
  });

  it('retries a 500 twice, then explains', async () => {
    server.fake.script({ kind: 'error', status: 500 }, { kind: 'error', status: 500 }, { kind: 'error', status: 500 });
    const { error } = await collect(provider().stream(hello));
    expect(server.fake.requests.map((r) => r.path)).toEqual(Array(3).fill('/v1/chat/completions'));
    expect(error).toMatchObject({ code: 'provider_server_error', status: 500, midStream: false });
    expect(error?.message).toBe(
      `The model server at ${server.host} ran into a problem (HTTP 500). Try again in a moment. It said: "The server had an error while processing your request. Sorry about that!"`,
    );
  });

  it('succeeds when a retry after a 503 works', async () => {
    server.fake.script({ kind: 'error', status: 503, body: 'upstream connect error' }, { kind: 'text', text: 'Back again.' });
    const { events, error } = await collect(provider().stream(hello));
    expect(error).toBeUndefined();
    expect(textOf(events)).toBe('Back again.');
    expect(server.fake.requests).toHaveLength(2);
  });

  it('retries rate limits (maxRetries honoured) but not quota', async () => {
    server.fake.script({ kind: 'error', status: 429 }, { kind: 'error', status: 429 });
    const limited = await collect(provider({ maxRetries: 1 }).stream(hello));
    expect(limited.error).toMatchObject({ code: 'provider_rate_limited', status: 429 });
    expect(limited.error?.message).toBe(`${server.host} is getting too many requests right now. Wait a minute and try again.`);
    expect(server.fake.requests).toHaveLength(2);

    server.fake.requests.length = 0;
    const quota = {
      error: {
        message: 'You exceeded your current quota, please check your plan and billing details.',
        type: 'insufficient_quota',
        code: 'insufficient_quota',
      },
    };
    server.fake.script({ kind: 'error', status: 429, body: JSON.stringify(quota) });
    const { error } = await collect(provider().stream(hello));
    expect(error).toMatchObject({ code: 'provider_quota', status: 429 });
    expect(server.fake.requests).toHaveLength(1);
  });

  it('waits as long as Retry-After says', async () => {
    server.fake.script({ kind: 'error', status: 429, headers: { 'retry-after': '1' } }, { kind: 'text', text: 'Thanks for waiting.' });
    const started = Date.now();
    const { events } = await collect(provider().stream(hello));
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(textOf(events)).toBe('Thanks for waiting.');
  });

  it('does not hold a turn for a Retry-After of minutes', async () => {
    server.fake.script({ kind: 'error', status: 429, headers: { 'retry-after': '120' } });
    const started = Date.now();
    const { error } = await collect(provider().stream(hello));
    expect(error?.code).toBe('provider_rate_limited');
    expect(server.fake.requests).toHaveLength(1);
    // Not after the two minutes asked for: half of one is beyond any load's noise.
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('maps context-length errors, OpenAI and llama.cpp style', async () => {
    const openai = {
      error: {
        message: "This model's maximum context length is 128000 tokens.",
        type: 'invalid_request_error',
        param: 'messages',
        code: 'context_length_exceeded',
      },
    };
    const llamacpp = {
      error: {
        code: 400,
        message: 'the request exceeds the available context size, try increasing it',
        type: 'exceed_context_size_error',
        n_prompt_tokens: 4200,
        n_ctx: 4096,
      },
    };
    for (const body of [openai, llamacpp]) {
      server.fake.script({ kind: 'error', status: 400, body: JSON.stringify(body) });
      const { error } = await collect(provider().stream(hello));
      expect(error).toMatchObject({ code: 'provider_context_overflow', status: 400 });
    }
    expect(server.fake.requests).toHaveLength(2);
  });

  it('names the missing model (OpenAI and Ollama 404s), and tells a wrong address apart', async () => {
    const request = { ...hello, model: 'llama9' };
    server.fake.script({ kind: 'error', status: 404 });
    const openai = await collect(provider().stream(request));
    expect(openai.error).toMatchObject({ code: 'provider_model_not_found', status: 404 });
    expect(openai.error?.message).toBe(
      `The model "llama9" isn't available at ${server.host}. Choose another model in Settings, or install it on the server first.`,
    );
    server.fake.script({ kind: 'error', status: 404, body: '{"error":"model \\"llama9\\" not found, try pulling it first"}' });
    expect((await collect(provider().stream(request))).error?.code).toBe('provider_model_not_found');

    const wrongPath = await collect(provider({ baseUrl: `${server.fake.url}/api` }).stream(request));
    expect(wrongPath.error).toMatchObject({ code: 'provider_bad_response', status: 404 });
    expect(wrongPath.error?.message).toBe(`The server at ${server.host} doesn't offer the model API at this address. Check the server address in Settings.`);
  });
});

describe('timeouts, cancellation, unreachable servers', () => {
  it('gives up on a server that never answers after timeoutMs, without retrying', async () => {
    server.fake.script({ kind: 'hang' });
    const started = Date.now();
    const { error } = await collect(provider({ timeoutMs: 300 }).stream(hello));
    const elapsed = Date.now() - started;
    expect(error).toMatchObject({ code: 'provider_timeout', midStream: false });
    expect(error?.message).toBe(`The model server at ${server.host} stopped answering (nothing for 0.3 s). Try again, or check that it is running.`);
    // The hang never ends by itself: the 0.3 s timer ended it (not sooner), and nothing retried.
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(server.fake.requests).toHaveLength(1);
  });

  it('gives up when a started stream goes quiet for timeoutMs', async () => {
    // The replay's first write holds the role chunk and "I'm"; the next comes 600 ms later.
    server.fake.script({ kind: 'fixture', file: 'openai-chat-text.sse', delayMs: 600 });
    const { events, error } = await collect(provider({ timeoutMs: 300 }).stream(hello));
    expect(textOf(events)).toBe("I'm");
    expect(error).toMatchObject({ code: 'provider_timeout', midStream: true });
  });

  it('stops on abort mid-stream, keeping what was yielded', async () => {
    // An endless stream: it ends only because the abort stops it.
    server.fake.script({ kind: 'endless', text: 'one', everyMs: 100 });
    const controller = new AbortController();
    const events: unknown[] = [];
    const failure = await (async () => {
      for await (const event of provider().stream({ ...hello, signal: controller.signal })) {
        events.push(event);
        controller.abort();
      }
    })().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ProviderError);
    expect(failure).toMatchObject({ code: 'cancelled', midStream: true, message: 'The request was stopped.' });
    expect(events).toEqual([{ type: 'text', text: 'one' }]);
  });

  it('stops on abort while waiting for a hung server, and never starts when already aborted', async () => {
    server.fake.script({ kind: 'hang' });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const hung = await collect(provider({ timeoutMs: 5_000 }).stream({ ...hello, signal: controller.signal }));
    expect(hung.error).toMatchObject({ code: 'cancelled', midStream: false });

    server.fake.requests.length = 0;
    const aborted = await collect(provider().stream({ ...hello, signal: AbortSignal.abort() }));
    expect(aborted.error?.code).toBe('cancelled');
    expect(server.fake.requests).toHaveLength(0);
  });

  it('says the server cannot be reached when nothing listens, after retrying', async () => {
    const port = await closedPort();
    let attempts = 0;
    const counting: typeof fetch = (input, init) => {
      attempts++;
      return fetch(input, init);
    };
    const { error } = await collect(provider({ baseUrl: `http://127.0.0.1:${port}/v1`, fetch: counting }).stream(hello));
    expect(error).toMatchObject({ code: 'provider_unreachable', midStream: false });
    expect(error?.message).toBe(`Can't reach the model server at 127.0.0.1:${port}. Is it running?`);
    expect(attempts).toBe(3);
  });
});

describe('listModels', () => {
  it('lists the models from /v1/models, with the key', async () => {
    server.fake.models = ['llama3.2', 'qwen3:8b'];
    expect(await provider().listModels()).toEqual(['llama3.2', 'qwen3:8b']);
    expect(server.fake.requests.map((r) => [r.method, r.path, r.headers.authorization])).toEqual([['GET', '/v1/models', `Bearer ${KEY}`]]);
  });

  it("falls back to Ollama's /api/tags when /models fails", async () => {
    server.fake.models = ['llama3.2'];
    expect(await provider({ baseUrl: `${server.fake.url}/old-ollama/v1` }).listModels()).toEqual(['llama3.2']);
    expect(server.fake.requests.map((r) => r.path)).toEqual(['/old-ollama/v1/models', '/api/tags']);
  });

  it('reports the first failure when both fail, and honours cancellation', async () => {
    server.fake.apiKey = 'other';
    await expect(provider().listModels()).rejects.toMatchObject({ code: 'provider_auth', status: 401 });
    await expect(provider().listModels(AbortSignal.abort())).rejects.toMatchObject({ code: 'cancelled' });
  });
});

describe('structured answers', () => {
  const schema = { type: 'object', properties: { title: { type: 'string' } }, required: ['title'], additionalProperties: false };

  it('asks for the JSON Schema as response_format json_schema, with its strict flag', async () => {
    server.fake.script({ kind: 'text', text: '{"title":"A walk"}' });
    const { events } = await collect(provider().stream({ ...hello, responseSchema: { name: 'dream', schema, strict: true } }));
    expect(textOf(events)).toBe('{"title":"A walk"}');
    expect((server.fake.requests[0]!.body as { response_format: unknown }).response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'dream', schema, strict: true },
    });
    // Non-strict unless said; and nothing at all for a chat request.
    await collect(provider().stream({ ...hello, responseSchema: { name: 'nap', schema } }));
    expect((server.fake.requests[1]!.body as { response_format: { json_schema: { strict: boolean } } }).response_format.json_schema.strict).toBe(false);
    await collect(provider().stream(hello));
    expect(server.fake.requests[2]!.body).not.toHaveProperty('response_format');
  });
});

describe('max_completion_tokens', () => {
  // OpenAI's own words (400, code unsupported_parameter) for a reasoning model asked with max_tokens.
  const refusal = JSON.stringify({
    error: {
      message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
      type: 'invalid_request_error',
      param: 'max_tokens',
      code: 'unsupported_parameter',
    },
  });

  it('is what OpenAI and Azure are asked with for o-series and gpt-5 models; every other server gets max_tokens', () => {
    for (const model of ['o1', 'o1-mini', 'o3', 'o3-mini', 'o4-mini', 'gpt-5', 'gpt-5-mini', 'gpt-5.1', 'openai/o3']) {
      expect(limitField('https://api.openai.com/v1', model)).toBe('max_completion_tokens');
      expect(limitField('https://example-resource.openai.azure.com/openai/v1', model)).toBe('max_completion_tokens');
    }
    for (const model of ['gpt-4o', 'gpt-4.1-mini', 'omni-moderation']) expect(limitField('https://api.openai.com/v1', model)).toBe('max_tokens');
    expect(limitField('http://127.0.0.1:8080/v1', 'o3-mini')).toBe('max_tokens');
  });

  it('a server that refuses max_tokens is asked once more with max_completion_tokens, and so from then on', async () => {
    const request: StreamRequest = { ...hello, model: 'reasoner-a', maxTokens: 300 };
    server.fake.script({ kind: 'error', status: 400, body: refusal }, { kind: 'text', text: 'Thought it through.' });
    const first = await collect(provider().stream(request));
    expect(first.error).toBeUndefined();
    expect(textOf(first.events)).toBe('Thought it through.');
    const bodies = server.fake.requests.map((r) => r.body as Record<string, unknown>);
    expect(bodies).toHaveLength(2);
    expect(bodies[0]).toMatchObject({ max_tokens: 300 });
    expect(bodies[0]).not.toHaveProperty('max_completion_tokens');
    expect(bodies[1]).toMatchObject({ max_completion_tokens: 300 });
    expect(bodies[1]).not.toHaveProperty('max_tokens');

    // A new client for the same connection asks the new way at once.
    server.fake.script({ kind: 'text', text: 'Again.' });
    await collect(provider().stream(request));
    expect(server.fake.requests).toHaveLength(3);
    expect(server.fake.requests[2]!.body).toMatchObject({ max_completion_tokens: 300 });
    // Another model at the same server is not affected.
    server.fake.script({ kind: 'text', text: 'Plain.' });
    await collect(provider().stream({ ...request, model: 'other-model' }));
    expect(server.fake.requests[3]!.body).toMatchObject({ max_tokens: 300 });
  });

  it('another 400, or the refusal with no limit to move, is not retried', async () => {
    server.fake.script({
      kind: 'error',
      status: 400,
      body: JSON.stringify({ error: { message: 'Invalid value for temperature', type: 'invalid_request_error' } }),
    });
    const other = await collect(provider().stream({ ...hello, model: 'reasoner-b', maxTokens: 10 }));
    expect(other.error).toBeInstanceOf(ProviderError);
    server.fake.script({ kind: 'error', status: 400, body: refusal });
    const bare = await collect(provider().stream({ ...hello, model: 'reasoner-c' }));
    expect(bare.error?.message).toContain('max_completion_tokens');
    expect(server.fake.requests).toHaveLength(2);
  });
});
