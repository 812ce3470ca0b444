// The tiny protocol the renderer and the host speak over the MessagePort that main hands each window.
//
//   renderer → host   { id, method, input }
//   host → renderer   { id, ok: true, value } | { id, ok: false, error: { code, message, field? } }
//                     { event, payload }
//
// This file is bundled into the sandboxed preload, so it imports types only (no zod, no Node).
// The host side lives in port-server.ts.
import type { ApiErrorShape } from '../../shared/api.js';
import type { AnimaBridge, BridgeReply } from '../../shared/bridge.js';

export interface PortRequest {
  id: number;
  method: string;
  input: unknown;
}
export type PortReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: ApiErrorShape };
export interface PortEvent {
  event: string;
  payload: unknown;
}

/**
 * One end of a message port, whatever its flavour: a DOM MessagePort in the preload, Electron's
 * MessagePortMain in the utility process, a worker_threads port in tests. The adapters are below.
 */
export interface Wire {
  post(message: unknown): void;
  /** Returns a function that removes the listener. */
  onMessage(listener: (data: unknown) => void): () => void;
  /** Called when the other end goes away, where the port can tell. */
  onClose(listener: () => void): () => void;
  close(): void;
}

export function isPortRequest(data: unknown): data is PortRequest {
  if (!data || typeof data !== 'object') return false;
  const r = data as Record<string, unknown>;
  return typeof r.id === 'number' && Number.isSafeInteger(r.id) && typeof r.method === 'string';
}

export function isPortReply(data: unknown): data is PortReply {
  if (!data || typeof data !== 'object') return false;
  const r = data as Record<string, unknown>;
  return typeof r.id === 'number' && typeof r.ok === 'boolean';
}

export function isPortEvent(data: unknown): data is PortEvent {
  return !!data && typeof data === 'object' && typeof (data as Record<string, unknown>).event === 'string';
}

// ---------------------------------------------------------------------------------------------
// Adapters
// ---------------------------------------------------------------------------------------------

/** The parts of a DOM MessagePort used here (also implemented by worker_threads' MessagePort). */
export interface DomPortLike {
  postMessage(message: unknown): void;
  addEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
  removeEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
  start(): void;
  close(): void;
}

export function wireFromDomPort(port: DomPortLike): Wire {
  const closeListeners = new Set<() => void>();
  // Chromium fires `close` on a MessagePort when the other end is gone; older builds never do, which
  // only means a dead host is noticed through main's host-down message instead.
  const target = port as unknown as {
    addEventListener(type: string, listener: () => void): void;
  };
  target.addEventListener('close', () => closeListeners.forEach((l) => l()));
  const wire: Wire = {
    post: (message) => port.postMessage(message),
    onMessage(listener) {
      const handler = (event: { data: unknown }) => listener(event.data);
      port.addEventListener('message', handler);
      // addEventListener (unlike onmessage) does not start delivery by itself.
      port.start();
      return () => port.removeEventListener('message', handler);
    },
    onClose(listener) {
      closeListeners.add(listener);
      return () => closeListeners.delete(listener);
    },
    close: () => port.close(),
  };
  return wire;
}

/** Electron's MessagePortMain (and any emitter whose message events carry `{ data }`). */
export interface EmitterPortLike {
  postMessage(message: unknown): void;
  on(event: 'message', listener: (event: { data: unknown }) => void): unknown;
  on(event: 'close', listener: () => void): unknown;
  off(event: 'message', listener: (event: { data: unknown }) => void): unknown;
  off(event: 'close', listener: () => void): unknown;
  start(): void;
  close(): void;
}

export function wireFromEmitterPort(port: EmitterPortLike): Wire {
  return {
    post: (message) => port.postMessage(message),
    onMessage(listener) {
      const handler = (event: { data: unknown }) => listener(event.data);
      port.on('message', handler);
      // MessagePortMain queues messages until start() is called.
      port.start();
      return () => port.off('message', handler);
    },
    onClose(listener) {
      port.on('close', listener);
      return () => port.off('close', listener);
    },
    close: () => port.close(),
  };
}

// ---------------------------------------------------------------------------------------------
// Client (the preload)
// ---------------------------------------------------------------------------------------------

export interface PortClient extends Pick<AnimaBridge, 'invoke' | 'onEvent'> {
  /** Use this port from now on. Calls still waiting on a previous port fail: the host that took them is gone. */
  attach(wire: Wire): void;
  /**
   * The host went away. Waiting calls fail with `error`; later calls queue for the next port when
   * `reconnecting`, and fail at once otherwise.
   */
  detach(error: ApiErrorShape, reconnecting: boolean): void;
}

export const CONNECTION_RESET: ApiErrorShape = {
  code: 'internal',
  message: "Anima's background process restarted before answering. Please try again.",
};
export const HOST_GONE: ApiErrorShape = {
  code: 'internal',
  message: "Anima's background process has stopped. Please quit and reopen Anima.",
};

export function createPortClient(): PortClient {
  let wire: Wire | null = null;
  let unlisten: Array<() => void> = [];
  let down: ApiErrorShape | null = null;
  let nextId = 1;
  const pending = new Map<number, (reply: BridgeReply) => void>();
  const queued: PortRequest[] = [];
  const listeners = new Set<(name: string, payload: unknown) => void>();

  function failPending(error: ApiErrorShape): void {
    const waiting = [...pending.values()];
    pending.clear();
    queued.length = 0;
    for (const resolve of waiting) resolve({ ok: false, error });
  }

  function send(request: PortRequest): void {
    try {
      wire!.post(request);
    } catch (err) {
      // Structured clone refuses functions, DOM nodes and the like: that is bad input, not a host fault.
      const resolve = pending.get(request.id);
      pending.delete(request.id);
      resolve?.({
        ok: false,
        error: { code: 'invalid_input', message: `Could not send ${request.method}: ${(err as Error).message}` },
      });
    }
  }

  function receive(data: unknown): void {
    if (isPortEvent(data)) {
      for (const listener of [...listeners]) {
        try {
          listener(data.event, data.payload);
        } catch (err) {
          console.error('anima: an event listener threw', err);
        }
      }
      return;
    }
    if (!isPortReply(data)) return;
    const resolve = pending.get(data.id);
    if (!resolve) return;
    pending.delete(data.id);
    resolve(data.ok ? { ok: true, value: data.value } : { ok: false, error: data.error });
  }

  function release(): void {
    unlisten.forEach((off) => off());
    unlisten = [];
    wire = null;
  }

  const client: PortClient = {
    invoke(method, input) {
      if (down) return Promise.resolve({ ok: false, error: down });
      const request: PortRequest = { id: nextId++, method: String(method), input };
      return new Promise<BridgeReply>((resolve) => {
        pending.set(request.id, resolve);
        if (wire) send(request);
        else queued.push(request);
      });
    },

    onEvent(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },

    attach(next) {
      if (wire) {
        const old = wire;
        release();
        // Calls sent on the old port can no longer be answered; queued ones were never sent.
        for (const [id, resolve] of [...pending]) {
          if (queued.some((q) => q.id === id)) continue;
          pending.delete(id);
          resolve({ ok: false, error: CONNECTION_RESET });
        }
        old.close();
      }
      down = null;
      wire = next;
      unlisten = [
        next.onMessage(receive),
        next.onClose(() => {
          if (wire === next) client.detach(CONNECTION_RESET, true);
        }),
      ];
      for (const request of queued.splice(0)) send(request);
    },

    detach(error, reconnecting) {
      release();
      failPending(error);
      down = reconnecting ? null : error;
    },
  };
  return client;
}
