// For store tests: a client that answers each call with the handler a test gave for that method,
// keeps every call it was asked in order, and lets the test push host events to whatever the store
// subscribed. Calls without a handler fail as the host fails an unknown method.
import { ApiError, type ApiEventName, type ApiEvents, type ApiInput, type ApiMethod, type ApiOutputs } from '../../shared/api.js';
import type { RendererClient } from './index.js';

export type Handler<K extends ApiMethod> = (input: ApiInput<K>) => ApiOutputs[K] | Promise<ApiOutputs[K]>;

export interface ScriptedClient {
  client: RendererClient;
  /** What each method answers; set and replace freely within a test. */
  handlers: { [K in ApiMethod]?: Handler<K> };
  /** Every call the store made, oldest first; empty it with `calls.length = 0`. */
  calls: { method: ApiMethod; input: unknown }[];
  /** Delivers a host event to the store's listener, if it subscribed. */
  emit<E extends ApiEventName>(event: E, payload: ApiEvents[E]): void;
  /** The event stream opened (first time) or opened again (`reconnected`), as the transport says it. */
  connected(reconnected: boolean): void;
}

export function scriptedClient(): ScriptedClient {
  const handlers: ScriptedClient['handlers'] = {};
  const calls: ScriptedClient['calls'] = [];
  const listeners = new Map<string, (payload: unknown) => void>();
  const connectListeners = new Set<(reconnected: boolean) => void>();
  const client: RendererClient = {
    transport: 'http',
    connectionState: 'open',
    async call<K extends ApiMethod>(method: K, input: ApiInput<K>): Promise<ApiOutputs[K]> {
      calls.push({ method, input });
      const h = handlers[method] as Handler<K> | undefined;
      if (!h) throw new ApiError('unknown_method', `no ${method}`);
      return h(input);
    },
    on: (event, listener) => {
      listeners.set(event, listener as (payload: unknown) => void);
      return () => listeners.delete(event);
    },
    onConnect: (listener) => {
      connectListeners.add(listener);
      return () => connectListeners.delete(listener);
    },
    onConnectionState: () => () => {},
    openExternal: () => {},
  };
  return {
    client,
    handlers,
    calls,
    emit: (event, payload) => listeners.get(event)?.(payload),
    connected: (reconnected) => {
      for (const listener of connectListeners) listener(reconnected);
    },
  };
}
