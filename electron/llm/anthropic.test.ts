// The Anthropic client against the loopback fake server.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES_DIR } from '../../e2e/fake-llm/server.js';
import { anthropicBaseUrl, createProvider, type ProviderOptions, type StreamRequest } from './index.js';
import { collect, textOf, wireFile } from './test-support.js';
import { PATIENCE_MS } from '../testing/patience.js';
import { useFakeServer } from './testing/fake-server.js';

const KEY = 'sk-ant-test-0123456789';
const server = useFakeServer();

function provider(options: Partial<ProviderOptions> = {}) {
  return createProvider({ kind: 'anthropic', baseUrl: server.fake.url, apiKey: KEY, retryBaseMs: 5, timeoutMs: PATIENCE_MS, ...options });
}

const hello: StreamRequest = { model: 'claude-test', messages: [{ role: 'user', content: 'hello there' }] };

const event = (data: { type: string } & Record<string, unknown>) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
const start = event({
  type: 'message_start',
  message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], usage: { input_tokens: 9, output_tokens: 1 } },
});
const ping = event({ type: 'ping' });
const stop = (reason: string) =>
  event({ type: 'message_delta', delta: { stop_reason: reason, stop_sequence: null }, usage: { output_tokens: 4 } }) + event({ type: 'message_stop' });
const textBlock = (index: number, ...texts: string[]) =>
  event({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }) +
  texts.map((text) => event({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } })).join('');

function replayWire(body: string) {
  server.fake.script({ kind: 'fixture', file: wireFile('made-up.sse', body) });
  return collect(provider().stream(hello));
}

describe('request', () => {
  it('sends the system prompt on top, tools, and tool turns as blocks', async () => {
    const request: StreamRequest = {
      model: 'claude-test',
      temperature: 0.5,
      tools: [{ name: 'remember', description: 'Store a memory', parameters: { type: 'object', properties: {} } }],
      messages: [
        { role: 'system', content: 'You are Anima.' },
        { role: 'system', content: 'Resident memory: none.' },
        { role: 'user', content: 'Remember two things.' },
        {
          role: 'assistant',
          content: 'Saving both.',
          toolCalls: [
            { id: 'toolu_1', name: 'remember', arguments: { text: 'a' } },
            { id: 'toolu_2', name: 'remember', arguments: { text: 'b' } },
          ],
        },
        { role: 'tool', toolCallId: 'toolu_1', name: 'remember', content: 'stored a' },
        { role: 'tool', toolCallId: 'toolu_2', name: 'remember', content: 'stored b' },
        { role: 'assistant', content: '' },
        { role: 'user', content: 'Thanks!' },
      ],
    };
    const { events } = await collect(provider().stream(request));
    expect(textOf(events)).toBe('I hear you: Thanks!');
    const [sent] = server.fake.requests;
    expect(sent!.path).toBe('/v1/messages');
    expect(sent!.headers['x-api-key']).toBe(KEY);
    expect(sent!.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent!.headers.authorization).toBeUndefined();
    expect(sent!.body).toEqual({
      model: 'claude-test',
      max_tokens: 4096,
      stream: true,
      temperature: 0.5,
      system: 'You are Anima.\n\nResident memory: none.',
      tools: [{ name: 'remember', description: 'Store a memory', input_schema: { type: 'object', properties: {} } }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Remember two things.' }] },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Saving both.' },
            { type: 'tool_use', id: 'toolu_1', name: 'remember', input: { text: 'a' } },
            { type: 'tool_use', id: 'toolu_2', name: 'remember', input: { text: 'b' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: 'stored a' },
            { type: 'tool_result', tool_use_id: 'toolu_2', content: 'stored b' },
            { type: 'text', text: 'Thanks!' },
          ],
        },
      ],
    });
  });

  it('accepts the address with or without /v1 and /messages', async () => {
    for (const baseUrl of [server.fake.url, server.fake.baseUrl, `${server.fake.baseUrl}/messages`, `${server.fake.url}/`]) {
      await collect(provider({ baseUrl }).stream({ ...hello, maxTokens: 100 }));
    }
    expect(server.fake.requests.map((r) => r.path)).toEqual(Array(4).fill('/v1/messages'));
    expect((server.fake.requests[0]!.body as { max_tokens: number }).max_tokens).toBe(100);
    expect(anthropicBaseUrl('https://api.anthropic.com')).toBe('https://api.anthropic.com/v1');
  });
});

describe('streaming', () => {
  it('streams scripted text with usage', async () => {
    server.fake.script({ kind: 'text', text: 'Hello there, I remember you.', chunks: 2 });
    const { events, error } = await collect(provider().stream(hello));
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: 'text', text: 'Hello there,' },
      { type: 'text', text: ' I remember you.' },
      { type: 'done', finishReason: 'stop', usage: { inputTokens: 2, outputTokens: 2 } },
    ]);
  });

  it('yields a scripted tool call, then the scripted answer', async () => {
    server.fake.script({ kind: 'tool_call', name: 'memory_recall', arguments: { query: 'Miso' }, thenText: 'Miso is your cat.' });
    const first = await collect(provider().stream(hello));
    expect(first.events).toEqual([
      { type: 'tool_call', call: { id: 'toolu_fake00000000000000000001', name: 'memory_recall', arguments: { query: 'Miso' } } },
      { type: 'done', finishReason: 'tool_calls', usage: { inputTokens: 2, outputTokens: 4 } },
    ]);
    expect(textOf((await collect(provider().stream(hello))).events)).toBe('Miso is your cat.');
  });

  it('reads a tool with no arguments (only partial_json "") with pings inside the block', async () => {
    const body =
      start +
      event({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_9', name: 'list_memories', input: {} } }) +
      ping +
      event({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '' } }) +
      ping +
      event({ type: 'content_block_stop', index: 0 }) +
      ping +
      stop('tool_use');
    const { events, error } = await replayWire(body);
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: 'tool_call', call: { id: 'toolu_9', name: 'list_memories', arguments: {} } },
      { type: 'done', finishReason: 'tool_calls', usage: { inputTokens: 9, outputTokens: 4 } },
    ]);
  });

  it('yields thinking as reasoning and maps max_tokens to length', async () => {
    const body =
      start +
      event({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } }) +
      event({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Let me think.' } }) +
      event({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'abc' } }) +
      event({ type: 'content_block_stop', index: 0 }) +
      textBlock(1, 'Short') +
      event({ type: 'content_block_stop', index: 1 }) +
      stop('max_tokens');
    const { events } = await replayWire(body);
    expect(events).toEqual([
      { type: 'reasoning', text: 'Let me think.' },
      { type: 'text', text: 'Short' },
      { type: 'done', finishReason: 'length', usage: { inputTokens: 9, outputTokens: 4 } },
    ]);
  });

  it('reads data: without a space (Anthropic-compatible proxies)', async () => {
    const original = fs.readFileSync(path.join(FIXTURES_DIR, 'anthropic-messages-text.sse'), 'utf8');
    const { events } = await replayWire(original.replaceAll('data: ', 'data:'));
    expect(textOf(events)).toBe("Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?");
  });
});

describe('failures', () => {
  it('fails without message_stop, after yielding the partial text', async () => {
    const original = fs.readFileSync(path.join(FIXTURES_DIR, 'anthropic-messages-text.sse'), 'utf8');
    const { events, error } = await replayWire(original.slice(0, original.indexOf('event: content_block_stop')));
    expect(textOf(events)).toBe("Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?");
    expect(events.some((e) => e.type === 'done')).toBe(false);
    expect(error).toMatchObject({ code: 'provider_bad_response', midStream: true });
    expect(error?.message).toBe(`The connection to ${server.host} ended before the reply was complete.`);
  });

  it('fails on a cut connection with midStream set', async () => {
    server.fake.script({ kind: 'cut', text: 'I was saying something important when' });
    const { events, error } = await collect(provider().stream(hello));
    expect(textOf(events)).toBe('I was saying something important when');
    expect(error).toMatchObject({ code: 'provider_bad_response', midStream: true });
  });

  it('maps an overloaded error event after text, with midStream set', async () => {
    const body = start + textBlock(0, 'Half an ans') + event({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    const { events, error } = await replayWire(body);
    expect(textOf(events)).toBe('Half an ans');
    expect(error).toMatchObject({ code: 'provider_server_error', midStream: true });
    expect(error?.message).toBe(`The model server at ${server.host} is overloaded right now. Try again in a moment.`);
  });

  it('fails when max_tokens cut a tool call mid-arguments', async () => {
    const body =
      start +
      event({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_3', name: 'remember', input: {} } }) +
      event({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"text": "My sister lives in' } }) +
      stop('max_tokens');
    const { events, error } = await replayWire(body);
    expect(events).toEqual([]);
    expect(error).toMatchObject({ code: 'provider_bad_response' });
    expect(error?.message).toBe(`The model tried to use the tool "remember" but sent arguments that aren't valid JSON.`);
  });

  it('maps HTTP errors in the Anthropic shape', async () => {
    const cases: [number, string | undefined, string, number][] = [
      [401, undefined, 'provider_auth', 1],
      [404, undefined, 'provider_model_not_found', 1],
      [429, undefined, 'provider_rate_limited', 3],
      [529, undefined, 'provider_server_error', 3],
      [
        400,
        '{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}',
        'provider_quota',
        1,
      ],
      [
        400,
        '{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}',
        'provider_context_overflow',
        1,
      ],
    ];
    for (const [status, body, code, attempts] of cases) {
      server.fake.requests.length = 0;
      for (let i = 0; i < attempts; i++) server.fake.script({ kind: 'error', status, body });
      const { error } = await collect(provider().stream(hello));
      expect([status, error?.code, error?.status]).toEqual([status, code, status]);
      expect(server.fake.requests).toHaveLength(attempts);
    }
  });

  it('says which model is missing and rejects a wrong key', async () => {
    server.fake.script({ kind: 'error', status: 404 });
    const missing = await collect(provider().stream({ ...hello, model: 'claude-9' }));
    expect(missing.error?.message).toBe(
      `The model "claude-9" isn't available at ${server.host}. Choose another model in Settings, or install it on the server first.`,
    );
    server.fake.apiKey = 'another-key';
    const denied = await collect(provider().stream(hello));
    expect(denied.error).toMatchObject({ code: 'provider_auth', status: 401 });
  });
});

describe('listModels', () => {
  it('lists /v1/models with the Anthropic headers', async () => {
    server.fake.models = ['claude-sonnet-4-5', 'claude-haiku-4-5'];
    expect(await provider().listModels()).toEqual(['claude-sonnet-4-5', 'claude-haiku-4-5']);
    const [sent] = server.fake.requests;
    expect([sent!.method, sent!.path, sent!.headers['x-api-key'], sent!.headers['anthropic-version']]).toEqual(['GET', '/v1/models', KEY, '2023-06-01']);
  });

  it('reports a rejected key', async () => {
    server.fake.apiKey = 'another-key';
    await expect(provider().listModels()).rejects.toMatchObject({ code: 'provider_auth' });
  });
});

describe('structured answers', () => {
  const schema = { type: 'object', properties: { title: { type: 'string' } }, required: ['title'], additionalProperties: false };
  const request: StreamRequest = { ...hello, responseSchema: { name: 'dream', schema, strict: true } };

  it('forces a tool whose input schema is the answer, and streams its input back as the answer text', async () => {
    server.fake.script({ kind: 'tool_call', name: 'dream', arguments: { title: 'A walk by the river' } });
    const { events, error } = await collect(provider().stream(request));
    expect(error).toBeUndefined();
    expect(events.some((e) => e.type === 'tool_call')).toBe(false);
    expect(JSON.parse(textOf(events))).toEqual({ title: 'A walk by the river' });
    expect(events.at(-1)).toMatchObject({ type: 'done', finishReason: 'stop' });
    const body = server.fake.requests[0]!.body as Record<string, unknown>;
    expect(body.tools).toEqual([{ name: 'dream', description: expect.any(String), input_schema: schema }]);
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'dream' });
  });

  it('takes an input that came whole with the block start, and text from a server that ignored the tool', async () => {
    const whole =
      start +
      event({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'dream', input: { title: 'Whole' } } }) +
      event({ type: 'content_block_stop', index: 0 }) +
      stop('tool_use');
    server.fake.script({ kind: 'fixture', file: wireFile('whole.sse', whole) });
    expect(JSON.parse(textOf((await collect(provider().stream(request))).events))).toEqual({ title: 'Whole' });
    server.fake.script({ kind: 'text', text: '{"title":"As text"}' });
    expect(textOf((await collect(provider().stream(request))).events)).toBe('{"title":"As text"}');
  });

  it('keeps other tools beside the answer tool, and reports their calls as calls', async () => {
    const tools = [{ name: 'remember', description: 'Store a memory', parameters: { type: 'object', properties: {} } }];
    server.fake.script({ kind: 'tool_call', name: 'remember', arguments: { text: 'a' } });
    const { events } = await collect(provider().stream({ ...request, tools }));
    expect(events[0]).toMatchObject({ type: 'tool_call', call: { name: 'remember' } });
    expect((server.fake.requests[0]!.body as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual(['remember', 'dream']);
  });
});
