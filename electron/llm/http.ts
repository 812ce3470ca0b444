// One HTTP exchange with a model server: timeouts, cancellation, safe retries, error mapping.
import { cancelledError, errorFromHttp, streamEndedError, timeoutError, unreachableError, type ErrorContext } from './errors.js';
import { parseJsonObject, type JsonObject } from './json.js';
import { ProviderError, type ProviderOptions } from './types.js';

export interface HttpSettings {
  fetch: typeof fetch;
  timeoutMs: number;
  maxRetries: number;
  retryBaseMs: number;
}

export function httpSettings(options: ProviderOptions): HttpSettings {
  return {
    fetch: options.fetch ?? globalThis.fetch,
    timeoutMs: options.timeoutMs ?? 60_000,
    maxRetries: options.maxRetries ?? 2,
    retryBaseMs: options.retryBaseMs ?? 500,
  };
}

export interface HttpRequest {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  /** Sent as JSON. */
  body?: unknown;
  signal?: AbortSignal;
  /** Names the server and model in error messages, and the key to keep out of them. */
  context: ErrorContext;
}

/** The server address a person typed, or an error that says what is wrong with it. */
export function parseAddress(baseUrl: string): URL {
  try {
    return new URL(baseUrl.trim());
  } catch {
    throw new ProviderError('provider_unreachable', `"${baseUrl}" isn't a valid server address. It should look like http://127.0.0.1:11434.`);
  }
}

/** A longer Retry-After is not worth holding a chat turn for: report the rate limit instead. */
const MAX_RETRY_WAIT_MS = 20_000;

/**
 * Sends the request and returns the response body as chunks. Retries happen only here, before
 * the body is handed out, so no text is ever shown twice: on network errors, rate limits and
 * 5xx. Never on timeouts (the person has already waited timeoutMs), quota, auth or other 4xx.
 */
export async function openBody(settings: HttpSettings, request: HttpRequest): Promise<AsyncGenerator<Uint8Array>> {
  for (let attempt = 0; ; attempt++) {
    if (request.signal?.aborted) throw cancelledError();
    const guard = new Guard(settings.timeoutMs, request.signal, request.context);
    let response: Response;
    try {
      response = await guard.bounded(
        settings.fetch(request.url, {
          method: request.method,
          headers: request.headers,
          body: request.body === undefined ? undefined : JSON.stringify(request.body),
          signal: guard.signal,
        }),
      );
    } catch (error) {
      guard.dispose();
      const failure = guard.explain(error) ?? unreachableError(request.context, error);
      if (failure.code !== 'provider_unreachable' || attempt >= settings.maxRetries) throw failure;
      await sleep(backoffMs(settings, attempt), request.signal);
      continue;
    }
    if (response.ok) return readBody(response, guard);

    const failure = errorFromHttp(response.status, await readErrorText(response, guard), request.context);
    guard.dispose();
    const retryable = failure.code === 'provider_rate_limited' || failure.code === 'provider_server_error';
    const wait = retryAfterMs(response.headers) ?? backoffMs(settings, attempt);
    if (!retryable || attempt >= settings.maxRetries || wait > MAX_RETRY_WAIT_MS) throw failure;
    await sleep(wait, request.signal);
  }
}

/**
 * Passes a body through, keeping its first bytes: when a "stream" turns out not to be one (an error
 * as plain JSON with HTTP 200, a proxy's web page), what the server said is still there to report.
 */
export function keepHead(body: AsyncIterable<Uint8Array>, limit = 16_384): { body: AsyncGenerator<Uint8Array>; head: () => string } {
  const kept: Uint8Array[] = [];
  let size = 0;
  async function* pass(): AsyncGenerator<Uint8Array> {
    for await (const chunk of body) {
      if (size < limit) {
        kept.push(chunk.subarray(0, limit - size));
        size += Math.min(chunk.length, limit - size);
      }
      yield chunk;
    }
  }
  return { body: pass(), head: () => Buffer.concat(kept).toString('utf8') };
}

/** A whole JSON response (model lists). */
export async function fetchJson(settings: HttpSettings, request: HttpRequest): Promise<JsonObject> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of await openBody(settings, request)) chunks.push(chunk);
  return parseJsonObject(Buffer.concat(chunks).toString('utf8'), request.context.host);
}

async function* readBody(response: Response, guard: Guard): AsyncGenerator<Uint8Array> {
  if (!response.body) {
    guard.dispose();
    return;
  }
  const reader = response.body.getReader();
  let finished = false;
  try {
    for (;;) {
      let result: Awaited<ReturnType<typeof reader.read>>;
      try {
        // The timer runs only while waiting on the server, not while the consumer handles a chunk.
        result = await guard.bounded(reader.read());
      } catch (error) {
        throw guard.explain(error) ?? streamEndedError(guard.context);
      }
      if (result.done) {
        finished = true;
        return;
      }
      yield result.value;
    }
  } finally {
    // A consumer that stops early (it saw its terminator, or failed) must free the connection.
    if (!finished) reader.cancel().catch(() => undefined);
    guard.dispose();
  }
}

async function readErrorText(response: Response, guard: Guard): Promise<string> {
  try {
    return await guard.bounded(response.text());
  } catch (error) {
    const failure = guard.explain(error);
    if (failure) {
      guard.dispose();
      throw failure;
    }
    return ''; // the status alone still says what went wrong
  }
}

/** Abort wiring for one attempt: the caller's signal, plus a timer on every wait for the server. */
class Guard {
  private readonly controller = new AbortController();
  private timedOut = false;
  private readonly forward = () => this.controller.abort();

  constructor(
    private readonly timeoutMs: number,
    private readonly callerSignal: AbortSignal | undefined,
    readonly context: ErrorContext,
  ) {
    callerSignal?.addEventListener('abort', this.forward, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  async bounded<T>(work: Promise<T>): Promise<T> {
    const timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort();
    }, this.timeoutMs);
    try {
      return await work;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Tells cancellation and timeouts apart from other failures, which the caller maps by phase. */
  explain(error: unknown): ProviderError | undefined {
    if (error instanceof ProviderError) return error;
    if (this.callerSignal?.aborted) return cancelledError();
    if (this.timedOut) return timeoutError(this.context, this.timeoutMs);
    return undefined;
  }

  dispose(): void {
    this.callerSignal?.removeEventListener('abort', this.forward);
  }
}

/** Exponential backoff with jitter, so clients that failed together do not retry together. */
function backoffMs(settings: HttpSettings, attempt: number): number {
  const ceiling = settings.retryBaseMs * 2 ** attempt;
  return ceiling / 2 + (Math.random() * ceiling) / 2;
}

/** OpenAI sends `retry-after-ms`; the standard `Retry-After` is seconds or an HTTP date. */
function retryAfterMs(headers: Headers): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '' && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const value = headers.get('retry-after');
  if (value === null || value.trim() === '') return undefined;
  if (Number.isFinite(Number(value))) return Math.max(0, Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(cancelledError());
    const stop = () => {
      clearTimeout(timer);
      reject(cancelledError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', stop);
      resolve();
    }, ms);
    signal?.addEventListener('abort', stop, { once: true });
  });
}
