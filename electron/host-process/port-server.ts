// The host end of the port protocol (see port-protocol.ts): answers requests with host.call and
// pushes host events, for as long as the port lives.
import { ApiError, type ApiErrorShape } from '../../shared/api.js';
import type { Host } from '../host/types.js';
import { isPortRequest, type PortReply, type Wire } from './port-protocol.js';
import type { Log } from '../../shared/log.js';

export type { Log } from '../../shared/log.js';

export const INTERNAL_ERROR_MESSAGE = 'Something went wrong inside Anima. The details are in the log.';

/** ApiErrors travel as they are; anything else is a bug whose details belong in the log, not the UI. */
export function toErrorShape(err: unknown, method: string, log: Log): ApiErrorShape {
  if (err instanceof ApiError) return err.toJSON();
  const detail = err instanceof Error ? (err.stack ?? err.message) : String(err);
  log('error', `${method} failed: ${detail}`);
  return { code: 'internal', message: INTERNAL_ERROR_MESSAGE };
}

/**
 * Serve one renderer. `host` may still be starting (or have failed to start): requests wait for it,
 * and a failed start answers each request with that failure. Returns a function that stops serving.
 */
export function serveHost(host: Promise<Host>, wire: Wire, log: Log): () => void {
  let closed = false;
  let unsubscribeEvents: (() => void) | null = null;

  function post(message: PortReply | { event: string; payload: unknown }): void {
    if (closed) return;
    try {
      wire.post(message);
    } catch (err) {
      // A value the structured clone cannot carry is a host bug; the caller still gets an answer.
      if ('id' in message) {
        const error = toErrorShape(err, 'reply', log);
        if (message.ok) wire.post({ id: message.id, ok: false, error } satisfies PortReply);
      } else {
        log('error', `could not send event ${message.event}: ${(err as Error).message}`);
      }
    }
  }

  host.then(
    (h) => {
      if (closed) return;
      unsubscribeEvents = h.on((event, payload) => post({ event, payload }));
    },
    () => {
      // Reported to each request below, and logged once by whoever started the host.
    },
  );

  const offMessage = wire.onMessage((data) => {
    if (!isPortRequest(data)) {
      log('warn', 'ignored a malformed message on the renderer port');
      return;
    }
    const { id, method, input } = data;
    host
      .then((h) => h.call(method, input))
      .then(
        (value) => post({ id, ok: true, value }),
        (err: unknown) => post({ id, ok: false, error: toErrorShape(err, method, log) }),
      );
  });

  function stop(): void {
    if (closed) return;
    closed = true;
    offMessage();
    offClose();
    unsubscribeEvents?.();
  }
  // The renderer reloaded or its window closed: stop pushing events into the void.
  const offClose = wire.onClose(stop);
  return stop;
}
