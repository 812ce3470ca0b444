// Desktop mode: the Electron preload's window.anima bridge.
import { ApiError, type ApiEventName, type ApiEvents, type ApiInput, type ApiMethod, type ApiOutputs } from '../../shared/api.js';
import type { AnimaBridge } from '../../shared/bridge.js';
import { EventListeners } from './emitter.js';
import type { RendererClient } from './types.js';

export function createIpcClient(bridge: AnimaBridge): RendererClient {
  const events = new EventListeners();
  // One bridge subscription for the life of the window; listeners come and go on our side.
  bridge.onEvent((name, payload) => {
    events.emit(name, payload);
  });

  return {
    transport: 'ipc',
    // The port to the host lives as long as the window; there is nothing to reconnect.
    connectionState: 'open',
    async call<K extends ApiMethod>(method: K, input: ApiInput<K>): Promise<ApiOutputs[K]> {
      let reply;
      try {
        reply = await bridge.invoke(method, input ?? {});
      } catch (err) {
        throw new ApiError('internal', `The app's background process did not answer (${err instanceof Error ? err.message : String(err)})`);
      }
      if (reply.ok) return reply.value as ApiOutputs[K];
      throw ApiError.from(reply.error);
    },
    on<E extends ApiEventName>(event: E, listener: (payload: ApiEvents[E]) => void): () => void {
      return events.add(event, listener as (payload: unknown) => void);
    },
    onConnect(listener) {
      // Tell late subscribers the stream is up, like the first hello in browser mode.
      queueMicrotask(() => listener(false));
      return () => {};
    },
    onConnectionState: () => () => {},
    openExternal(url) {
      void bridge.openExternal(url).catch(() => {});
    },
  };
}
