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
  /** Waits before asking again whether the server is back (ms, by attempt); tests shorten them. */
  reconnectDelays?: readonly number[];
}

/** After the event stream gave up: ask again after 1 s, then less often, at most every 10 s. */
const RECONNECT_DELAYS = [1000, 2000, 4000, 8000, 10_000];

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

  const eventsUrl = `${base}/api/events?token=${encodeURIComponent(options.token)}`;
  const delays = options.reconnectDelays ?? RECONNECT_DELAYS;

  /**
   * The event stream gave up (the server answered with an error — it was shutting down — or the
   * browser stopped retrying): ask the server whether it is back and still takes this token, then
   * open a new stream. A restart on the same data folder keeps the address and token, so the tab
   * comes back by itself; a refused token (the link was reset) closes for good.
   */
  const retry = (attempt: number) => {
    setTimeout(
      () => {
        void (async () => {
          let status: number;
          try {
            // The cheapest call: answered only when the server is up, the host ready and the token good.
            const response = await doFetch(`${base}/api/call/app.info`, {
              method: 'POST',
              headers: { Authorization: `Bearer ${options.token}`, 'Content-Type': 'application/json' },
              body: '{}',
            });
            status = response.status;
          } catch {
            status = 0; // not listening (yet)
          }
          if (status === 401 || status === 403) return setState('closed');
          if (status === 200) return openEvents();
          retry(attempt + 1);
        })();
      },
      delays[Math.min(attempt, delays.length - 1)],
    );
  };

  const openEvents = () => {
    if (!options.createEventSource) return;
    const source = options.createEventSource(eventsUrl);
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
      // happens when the server answered with an error (shutting down, or the token was refused).
      setState(everConnected ? 'reconnecting' : 'connecting');
      if (source.readyState === 2) {
        source.close();
        retry(0);
      }
    };
  };
  openEvents();

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
