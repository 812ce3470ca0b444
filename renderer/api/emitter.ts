// A tiny typed listener set, shared by both transports.
export class Listeners<A extends unknown[]> {
  private readonly set = new Set<(...args: A) => void>();

  add(listener: (...args: A) => void): () => void {
    this.set.add(listener);
    return () => {
      this.set.delete(listener);
    };
  }

  emit(...args: A): void {
    for (const listener of [...this.set]) {
      try {
        listener(...args);
      } catch (err) {
        // One broken listener must not stop the others from hearing the event.
        console.error(err);
      }
    }
  }

  get size(): number {
    return this.set.size;
  }
}

/** Listener sets by event name: where a transport hands each host event it receives. */
export class EventListeners {
  private readonly byName = new Map<string, Listeners<[unknown]>>();

  add(name: string, listener: (payload: unknown) => void): () => void {
    let set = this.byName.get(name);
    if (!set) {
      set = new Listeners<[unknown]>();
      this.byName.set(name, set);
    }
    return set.add(listener);
  }

  emit(name: string, payload: unknown): void {
    this.byName.get(name)?.emit(payload);
  }
}
