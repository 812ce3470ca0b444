import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES_DIR } from '../../e2e/fake-llm/server.js';
import { NdjsonParser, SseParser, parseSse, type SseEvent } from './sse.js';

const bytes = (text: string) => new TextEncoder().encode(text);
const fixture = (name: string) => fs.readFileSync(path.join(FIXTURES_DIR, name));

function parseWhole(input: Uint8Array): SseEvent[] {
  const parser = new SseParser();
  return [...parser.push(input), ...parser.end()];
}

function parseByteByByte(input: Uint8Array): SseEvent[] {
  const parser = new SseParser();
  const events: SseEvent[] = [];
  for (let i = 0; i < input.length; i++) events.push(...parser.push(input.subarray(i, i + 1)));
  return [...events, ...parser.end()];
}

const sseFixtures = fs.readdirSync(FIXTURES_DIR).filter((file) => file.endsWith('.sse'));

describe('SseParser', () => {
  it('finds the SSE fixtures', () => {
    expect(sseFixtures).toHaveLength(12);
  });

  for (const file of sseFixtures) {
    it(`parses ${file} the same whole, byte by byte, and with CRLF line endings`, () => {
      const raw = fixture(file);
      const whole = parseWhole(raw);
      // One event per blank-line-terminated block.
      expect(whole).toHaveLength(raw.toString('utf8').split('\n\n').length - 1);
      expect(parseByteByByte(raw)).toEqual(whole);
      expect(parseByteByByte(bytes(raw.toString('utf8').replaceAll('\n', '\r\n')))).toEqual(whole);
      expect(parseWhole(bytes(raw.toString('utf8').replaceAll('\n', '\r')))).toEqual(whole);
    });
  }

  it('keeps a multi-byte character whole when a read splits it', () => {
    const events = parseByteByByte(fixture('llamacpp-reasoning-content.trimmed.sse'));
    const content = events.map((e) => e.data).find((data) => data.includes('😊'));
    expect(JSON.parse(content!).choices[0].delta.content).toBe(' 😊');
    expect(events.some((e) => e.data.includes('\uFFFD'))).toBe(false);
  });

  it('reads Anthropic event names and payloads with padding', () => {
    const events = parseWhole(fixture('anthropic-messages-tool-use.sse'));
    expect(events.map((e) => e.event)).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(events[2]).toEqual({ event: 'ping', data: '{"type": "ping"}' });
    expect(events.at(-1)).toEqual({ event: 'message_stop', data: '{"type":"message_stop"       }' });
  });

  it("surfaces llama.cpp's non-standard error: field as an error event", () => {
    expect(parseWhole(fixture('llamacpp-midstream-error-legacy.sse'))).toEqual([
      {
        event: 'error',
        data: '{"code":400,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"invalid_request_error"}',
      },
      { event: 'message', data: '[DONE]' },
    ]);
  });

  it('accepts data: without a space, skips comments, ignores id and retry, joins multi-line data', () => {
    const input = ': OPENROUTER PROCESSING\n\ndata:{"a":1}\n\nid: 7\nretry: 1000\nevent: custom\ndata: line one\ndata:line two\n\n';
    expect(parseByteByByte(bytes(input))).toEqual([
      { event: 'message', data: '{"a":1}' },
      { event: 'custom', data: 'line one\nline two' },
    ]);
  });

  it('does not carry an event name over to the next event', () => {
    expect(parseWhole(bytes('event: error\ndata: x\n\ndata: y\n\n'))).toEqual([
      { event: 'error', data: 'x' },
      { event: 'message', data: 'y' },
    ]);
  });

  it('dispatches nothing for a block without data', () => {
    expect(parseWhole(bytes('event: ping\n\n: keep-alive\n\n'))).toEqual([]);
  });

  it('splits several events arriving in one read (vLLM sends its last event with [DONE])', () => {
    const parser = new SseParser();
    expect(parser.push(bytes('data: {"x":1}\n\ndata: [DONE]\n\n'))).toEqual([
      { event: 'message', data: '{"x":1}' },
      { event: 'message', data: '[DONE]' },
    ]);
    expect(parser.end()).toEqual([]);
  });

  it('waits for the LF of a CRLF that a read split', () => {
    const parser = new SseParser();
    expect(parser.push(bytes('data: a\r'))).toEqual([]);
    expect(parser.push(bytes('\n\r'))).toEqual([]);
    expect(parser.push(bytes('\n'))).toEqual([{ event: 'message', data: 'a' }]);
  });

  it('joins one long line sent in many small reads, whatever the line endings', () => {
    const long = 'y'.repeat(300_000);
    for (const eol of ['\n', '\r\n', '\r']) {
      const parser = new SseParser();
      const all = bytes(`data: {"c":"${long}"}${eol}${eol}data: [DONE]${eol}${eol}`);
      const events: SseEvent[] = [];
      for (let i = 0; i < all.length; i += 997) events.push(...parser.push(all.subarray(i, i + 997)));
      events.push(...parser.end());
      expect(events.map((e) => e.data)).toEqual([`{"c":"${long}"}`, '[DONE]']);
    }
  });

  it('a CR that ends the stream still ends its line', () => {
    const parser = new SseParser();
    expect(parser.push(bytes('data: a\r'))).toEqual([]);
    expect(parser.end()).toEqual([{ event: 'message', data: 'a' }]);
  });

  it('dispatches an event left without its blank line at the end of the stream', () => {
    const parser = new SseParser();
    expect(parser.push(bytes('data: {"x":1}\n\ndata: [DONE]'))).toEqual([{ event: 'message', data: '{"x":1}' }]);
    expect(parser.end()).toEqual([{ event: 'message', data: '[DONE]' }]);
  });

  it('works over an async byte stream', async () => {
    async function* reads() {
      yield bytes('data: {"a"');
      yield bytes(':1}\n');
      yield bytes('\ndata: [DONE]\n\n');
    }
    const events: SseEvent[] = [];
    for await (const event of parseSse(reads())) events.push(event);
    expect(events).toEqual([
      { event: 'message', data: '{"a":1}' },
      { event: 'message', data: '[DONE]' },
    ]);
  });
});

describe('NdjsonParser', () => {
  for (const file of ['ollama-api-chat-tool-call.ndjson', 'ollama-api-generate-midstream-error.ndjson']) {
    it(`reads ${file} the same whole and byte by byte`, () => {
      const raw = fixture(file);
      const expected = raw.toString('utf8').trim().split('\n');
      const whole = new NdjsonParser();
      expect([...whole.push(raw), ...whole.end()]).toEqual(expected);
      const single = new NdjsonParser();
      const lines: string[] = [];
      for (let i = 0; i < raw.length; i++) lines.push(...single.push(raw.subarray(i, i + 1)));
      expect([...lines, ...single.end()]).toEqual(expected);
    });
  }

  it('skips blank lines, strips CR, and keeps a last line without a newline', () => {
    const parser = new NdjsonParser();
    expect(parser.push(bytes('{"a":1}\r\n\n  \n{"b":'))).toEqual(['{"a":1}']);
    expect(parser.push(bytes('2}'))).toEqual([]);
    expect(parser.end()).toEqual(['{"b":2}']);
  });
});
