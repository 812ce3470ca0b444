// What the transports share: the client they give the renderer, and their limits.
import type { ApiEventName, ApiEvents } from './events.js';
import type { ApiInput, ApiMethod, ApiOutputs } from './methods.js';

/** What a transport gives the renderer: one typed call and one typed subscription. */
export interface AnimaClient {
  call<K extends ApiMethod>(method: K, input: ApiInput<K>): Promise<ApiOutputs[K]>;
  /** Returns an unsubscribe function. */
  on<E extends ApiEventName>(event: E, listener: (payload: ApiEvents[E]) => void): () => void;
}

/** Transport limits, shared so both sides agree. */
export const MAX_BODY_BYTES = 1024 * 1024;
