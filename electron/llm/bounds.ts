// Bounds every model reply, whatever the wire protocol, and makes its text storable. A server can
// keep a connection busy forever with keep-alive comments (each read resets the HTTP layer's idle
// timer), or stream text without end; a reply must still end, and in a size the app can hold. And
// every model answer is untrusted input: NULs and lone surrogates are replaced where it enters.
import { storableValue } from '../../shared/text.js';
import { ProviderError, type ChatProvider, type StreamRequest, type StreamEvent } from './types.js';

export interface ReplyBounds {
  /**
   * Longest wait for the next event that carries something (text, reasoning, a tool call, a status).
   * Plain silence is the HTTP layer's to report (after its own timeout); this catches bytes without content.
   */
  idleMs: number;
  /** Longest a whole reply may take. */
  deadlineMs: number;
  /** Most characters of text and reasoning in one reply. */
  maxChars: number;
}

/** Remote servers: a reply of more than 15 minutes or a million characters is not a reply any more. */
export const DEFAULT_DEADLINE_MS = 15 * 60_000;
/** On-device models on a slow machine can take far longer for the same answer. */
export const LOCAL_DEADLINE_MS = 60 * 60_000;
export const DEFAULT_MAX_REPLY_CHARS = 1_000_000;

const minutes = (ms: number) => Number((ms / 60_000).toFixed(1));

export function boundedProvider(provider: ChatProvider, bounds: ReplyBounds): ChatProvider {
  return {
    kind: provider.kind,
    listModels: (signal) => provider.listModels(signal),
    stream: (request) => boundedStream(provider, request, bounds),
  };
}

async function* boundedStream(provider: ChatProvider, request: StreamRequest, bounds: ReplyBounds): AsyncGenerator<StreamEvent> {
  const controller = new AbortController();
  const signal = request.signal ? AbortSignal.any([request.signal, controller.signal]) : controller.signal;
  let stopped: ProviderError | undefined;
  let streamed = false;
  const stop = (error: ProviderError) => {
    error.midStream = streamed;
    stopped ??= error;
    controller.abort(stopped);
  };
  const deadline = setTimeout(
    () => stop(new ProviderError('provider_timeout', `The reply took more than ${minutes(bounds.deadlineMs)} minutes, so it was stopped there.`)),
    bounds.deadlineMs,
  );
  let idle: ReturnType<typeof setTimeout> | undefined;
  // Runs only while waiting on the provider, not while the consumer handles an event.
  const waitForNext = () => {
    idle = setTimeout(
      () =>
        stop(
          new ProviderError(
            'provider_timeout',
            `The model server sent only keep-alives, nothing of the reply, for ${Math.round(bounds.idleMs / 1000)} s. Try again, or check that it is running.`,
          ),
        ),
      bounds.idleMs,
    );
  };
  let chars = 0;
  try {
    waitForNext();
    for await (const raw of provider.stream({ ...request, signal })) {
      clearTimeout(idle);
      if (stopped) throw stopped;
      const event = storableValue(raw);
      if (event.type === 'text' || event.type === 'reasoning') {
        chars += event.text.length;
        if (chars > bounds.maxChars) {
          stop(new ProviderError('provider_bad_response', `The reply passed ${bounds.maxChars.toLocaleString('en-US')} characters, so it was stopped there.`));
          throw stopped;
        }
      }
      streamed ||= event.type === 'text';
      yield event;
      waitForNext();
    }
  } catch (error) {
    throw stopped ?? error;
  } finally {
    clearTimeout(deadline);
    clearTimeout(idle);
  }
}
