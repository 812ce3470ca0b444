// Incremental parsers for streamed model replies: server-sent events (OpenAI-compatible, Anthropic)
// and newline-delimited JSON (Ollama native).
//
// Network reads split the stream anywhere — inside a line, inside a UTF-8 character, between the
// CR and LF of a CRLF — and one read can carry several events (vLLM sends its last event and
// [DONE] together). So both parsers buffer across reads and only act on complete lines.

export interface SseEvent {
  /** The `event:` field; 'message' when none was sent; 'error' for llama.cpp's non-standard `error:` field. */
  event: string;
  data: string;
}

/**
 * Turns byte chunks into complete text lines, decoding UTF-8 across chunk boundaries. Each read is
 * scanned once: the pieces of an unfinished line wait in a list and are joined when its end comes,
 * so one huge line sent in many small reads costs linear time, not a rescan of all of it per read.
 */
class LineSplitter {
  private readonly decoder = new TextDecoder('utf-8');
  /** The unfinished line so far, in the pieces it came in. */
  private pieces: string[] = [];
  /** The last read ended with a CR: its line is held until the next read shows whether a LF follows (CRLF). */
  private afterCr = false;

  push(chunk: Uint8Array): string[] {
    return this.split(this.decoder.decode(chunk, { stream: true }));
  }

  /** Flushes the decoder; a last line without its line ending still counts (see SseParser.end). */
  end(): string[] {
    const lines = this.split(this.decoder.decode());
    if (this.afterCr) lines.push(this.takeLine());
    const rest = this.takeLine();
    if (rest !== '') lines.push(rest);
    return lines;
  }

  private takeLine(): string {
    const line = this.pieces.join('');
    this.pieces = [];
    this.afterCr = false;
    return line;
  }

  private split(text: string): string[] {
    const lines: string[] = [];
    let start = 0;
    if (this.afterCr && text !== '') {
      lines.push(this.takeLine());
      if (text.startsWith('\n')) start = 1;
    }
    const lineEnd = /[\r\n]/g;
    lineEnd.lastIndex = start;
    for (let match = lineEnd.exec(text); match; match = lineEnd.exec(text)) {
      this.pieces.push(text.slice(start, match.index));
      start = match.index + 1;
      if (match[0] === '\r' && start === text.length) {
        this.afterCr = true;
        return lines;
      }
      lines.push(this.takeLine());
      if (match[0] === '\r' && text[start] === '\n') start++;
      lineEnd.lastIndex = start;
    }
    if (start < text.length) this.pieces.push(text.slice(start));
    return lines;
  }
}

/** The event-stream format (WHATWG HTML §9.2), plus the deviations real model servers send. */
export class SseParser {
  private readonly lines = new LineSplitter();
  private eventName = '';
  private data: string[] = [];

  push(chunk: Uint8Array): SseEvent[] {
    return this.consume(this.lines.push(chunk));
  }

  /**
   * Call at end of stream. An event whose blank line never came is still dispatched: if its
   * payload was torn, its JSON fails to parse later, so nothing incomplete passes as whole —
   * and a server that ends with `data: [DONE]` and no blank line is understood.
   */
  end(): SseEvent[] {
    const events = this.consume(this.lines.end());
    const last = this.dispatch();
    if (last) events.push(last);
    return events;
  }

  private consume(lines: string[]): SseEvent[] {
    const events: SseEvent[] = [];
    for (const line of lines) {
      if (line === '') {
        const event = this.dispatch();
        if (event) events.push(event);
      } else {
        this.field(line);
      }
    }
    return events;
  }

  private field(line: string): void {
    if (line.startsWith(':')) return; // a comment, e.g. OpenRouter's ": OPENROUTER PROCESSING" keep-alive
    const colon = line.indexOf(':');
    const name = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    // The spec strips one optional space, so `data:{…}` (some proxies) and `data: {…}` are the same.
    if (value.startsWith(' ')) value = value.slice(1);
    if (name === 'event') {
      this.eventName = value;
    } else if (name === 'data') {
      this.data.push(value);
    } else if (name === 'error') {
      // llama.cpp before PR #16109 reported failures as an `error:` field, which a strict parser
      // would drop, leaving an empty event and a silent success. Surface it as an error event.
      this.eventName = 'error';
      this.data.push(value);
    }
    // `id` and `retry` only matter to EventSource reconnection, which a one-shot POST never does.
  }

  private dispatch(): SseEvent | undefined {
    const event = this.data.length > 0 ? { event: this.eventName || 'message', data: this.data.join('\n') } : undefined;
    this.eventName = '';
    this.data = [];
    return event;
  }
}

export async function* parseSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const parser = new SseParser();
  for await (const chunk of body) yield* parser.push(chunk);
  yield* parser.end();
}

/** Ollama's native format: one JSON document per line. Yields the non-blank lines; the caller parses them. */
export class NdjsonParser {
  private readonly lines = new LineSplitter();

  push(chunk: Uint8Array): string[] {
    return this.lines.push(chunk).filter((line) => line.trim() !== '');
  }

  end(): string[] {
    return this.lines.end().filter((line) => line.trim() !== '');
  }
}
