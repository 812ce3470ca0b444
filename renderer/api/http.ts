// Browser mode: calls as POST /api/call/<method>, events as server-sent events.
import {
  ApiError,
  EVENT_NAMES,
  ERROR_CODES,
  type ApiErrorShape,
  type ApiEventName,
  type ApiEvents,
  type ApiInput,
  type ApiMethod,
  type ApiOutputs,
  type ErrorCode,
} from '../../shared/api.js';
import { EventListeners, Listeners } from './emitter.js';
import type { ConnectionState, RendererClient } from './types.js';

/** The subset of EventSource this transport uses, so tests can hand in a fake. */
export interface EventSourceLike {
  addEventListener(type: string, listener: (event: { data: string }) => void): void;
  onerror: ((event: Event) => void) | null;
  readonly readyState: number;
  close(): void;
}

export interface HttpClientOptions {
  token: string;
  /** '' for the page's own origin; tests pass http://127.0.0.1:PORT. */
  baseUrl?: string;
  fetch?: typeof fetch;
  /** Omit to make a client without events (tests of calls only). */
  createEventSource?: (url: string) => EventSourceLike;
  openExternal?: (url: string) => void;
}

const knownCodes = new Set<string>(ERROR_CODES);

function isErrorShape(value: unknown): value is ApiErrorShape {
  if (!value || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  return typeof v.code === 'string' && typeof v.message === 'string';
}

/** Turn a non-200 reply into the error the contract promises, whatever the body turned out to be. */
export function errorFromResponse(status: number, bodyText: string): ApiError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bodyText);
  } catch {
    parsed = undefined;
  }
  const inner = parsed && typeof parsed === 'object' ? (parsed as { error?: unknown }).error : undefined;
  if (isErrorShape(inner)) {
    const code: ErrorCode = knownCodes.has(inner.code) ? inner.code : 'internal';
    return ApiError.from({ code, message: inner.message, field: typeof inner.field === 'string' ? inner.field : undefined });
  }
  // A proxy, a crashed server or an old token can answer without the JSON error envelope.
  const fallback: ErrorCode =
    status === 401 || status === 403 ? 'unauthorized' : status === 404 ? 'unknown_method' : status === 413 ? 'payload_too_large' : 'internal';
  return new ApiError(fallback, `The server answered ${status}${bodyText ? `: ${bodyText.slice(0, 200)}` : ''}`);
}

export function createHttpClient(options: HttpClientOptions): RendererClient {
  const base = options.baseUrl ?? '';
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init));
  const events = new EventListeners();
  const connect = new Listeners<[boolean]>();
  const stateListeners = new Listeners<[ConnectionState]>();
  let state: ConnectionState = 'connecting';
  let everConnected = false;

  const setState = (next: ConnectionState) => {
    if (next === state) return;
    state = next;
    stateListeners.emit(next);
  };

  if (options.createEventSource) {
    const source = options.createEventSource(`${base}/api/events?token=${encodeURIComponent(options.token)}`);
    for (const name of EVENT_NAMES) {
      source.addEventListener(name, (event) => {
        let payload: unknown;
        try {
          payload = JSON.parse(event.data);
        } catch {
          console.warn(`Ignoring malformed ${name} event`);
          return;
        }
        events.emit(name, payload);
      });
    }
    // The server sends hello on every (re)connect; anything sent while we were away is lost, so
    // listeners re-fetch what they show.
    source.addEventListener('hello', () => {
      const reconnected = everConnected;
      everConnected = true;
      setState('open');
      connect.emit(reconnected);
    });
    source.onerror = () => {
      // EventSource retries by itself after a network error; CLOSED (2) means it gave up, which
      // happens when the server answered with an error (e.g. the token was refused).
      setState(source.readyState === 2 ? 'closed' : everConnected ? 'reconnecting' : 'connecting');
    };
  }

  return {
    transport: 'http',
    get connectionState() {
      return state;
    },
    async call<K extends ApiMethod>(method: K, input: ApiInput<K>): Promise<ApiOutputs[K]> {
      let response: Response;
      try {
        response = await doFetch(`${base}/api/call/${method}`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${options.token}`, 'Content-Type': 'application/json' },
          body: JSON.stringify(input ?? {}),
        });
      } catch (err) {
        throw new ApiError('internal', `Could not reach Anima (${err instanceof Error ? err.message : String(err)})`);
      }
      const text = await response.text();
      if (response.status !== 200) throw errorFromResponse(response.status, text);
      try {
        return JSON.parse(text) as ApiOutputs[K];
      } catch {
        throw new ApiError('internal', `Anima sent a reply that is not JSON for ${method}`);
      }
    },
    on<E extends ApiEventName>(event: E, listener: (payload: ApiEvents[E]) => void): () => void {
      return events.add(event, listener as (payload: unknown) => void);
    },
    onConnect: (listener) => connect.add(listener),
    onConnectionState: (listener) => stateListeners.add(listener),
    openExternal(url) {
      if (options.openExternal) options.openExternal(url);
    },
    // A link cannot send a header: the token rides in the query, as for the event stream.
    exportDownloadUrl: (fileName) => `${base}/api/exports/${encodeURIComponent(fileName)}?token=${encodeURIComponent(options.token)}`,
  };
}
