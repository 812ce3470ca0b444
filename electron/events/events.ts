import type { ApiEventName, ApiEvents } from '../../shared/api.js';

/** A listener's arguments are a discriminated union, so checking the name narrows the payload. */
export type HostEventArgs = { [E in ApiEventName]: [event: E, payload: ApiEvents[E]] }[ApiEventName];
export type HostEventListener = (...args: HostEventArgs) => void;

/** A tiny typed emitter; a listener that throws never breaks the host. */
export class HostEvents {
  private listeners = new Set<HostEventListener>();

  on(listener: HostEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit<E extends ApiEventName>(event: E, payload: ApiEvents[E]): void {
    for (const listener of this.listeners) {
      try {
        listener(...([event, payload] as HostEventArgs));
      } catch {
        // A broken transport must not stop the others or the host.
      }
    }
  }
}
