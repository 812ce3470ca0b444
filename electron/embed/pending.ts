// The rows waiting in memory for a batch: each once, in the order they came, at most `max` of them.
// What does not fit is left to the backfill, which finds it in the tables.
import type { Item } from './embedded-rows.js';
import type { EmbedSource } from './vectors.js';

/** A row's place in the pending map: messages come by id (text) or seq (number), which must not collide. */
function itemKey(source: EmbedSource, id: string | number): string {
  return `${source}:${typeof id === 'number' ? `#${id}` : id}`;
}

export class PendingItems {
  private readonly items = new Map<string, Item>();

  constructor(private readonly max: number) {}

  get size(): number {
    return this.items.size;
  }

  /** Queues a row (again, at the end); false when the bound turned it away. */
  add(source: EmbedSource, id: string | number): boolean {
    const key = itemKey(source, id);
    if (this.items.has(key)) {
      // Once per row: a memory saved three times in a burst is read once, as it ends up.
      this.items.delete(key);
    } else if (this.items.size >= this.max) {
      return false;
    }
    this.items.set(key, { source, id });
    return true;
  }

  /** The oldest `count` rows, removed from the map. */
  take(count: number): Item[] {
    const out: Item[] = [];
    for (const [key, item] of this.items) {
      if (out.length >= count) break;
      this.items.delete(key);
      out.push(item);
    }
    return out;
  }

  /**
   * Puts the rows of a failed batch back in front of what came since, as long as the bound allows;
   * false when some had to be left for the backfill.
   */
  putBackInFront(back: Item[]): boolean {
    const rest = [...this.items.entries()];
    this.items.clear();
    for (const item of back) {
      if (this.items.size >= this.max) return false;
      this.items.set(itemKey(item.source, item.id), item);
    }
    for (const [key, item] of rest) {
      if (this.items.size >= this.max) return false;
      if (!this.items.has(key)) this.items.set(key, item);
    }
    return true;
  }

  clear(): void {
    this.items.clear();
  }
}
