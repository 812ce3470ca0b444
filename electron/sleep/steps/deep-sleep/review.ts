// What deep sleep reviews tonight: the memories written since it last ran (by anyone but itself),
// oldest first and at most MAX_REVIEWED_PER_NIGHT of them, each with its nearest neighbours in the
// whole store — and where its cursor on the change journal may move once the rounds are done.
import type { MemoryOutline } from '../../../memory/store.js';
import { readCursor } from '../cursors.js';
import type { SleepStepDeps } from '../deps.js';

/** New memories reviewed per night; the rest wait for the next night (the cursor only passes what was reviewed). */
export const MAX_REVIEWED_PER_NIGHT = 60;
const NEIGHBOURS = 4;
export const REVIEW_CURSOR = 'deep-sleep:memory_changes';

export class Review {
  /** Reviewed memories a round could not show tonight: they and all after them wait for the next night. */
  readonly waiting = new Set<number>();

  private constructor(
    private readonly stats: Record<string, number>,
    /** The journal entries since the cursor, oldest first. */
    private readonly changes: { id: number; memoryId: number }[],
    /** The cursor as it stood. */
    private readonly start: number,
    /** The last journal entry of the memories taken tonight. */
    private readonly end: number,
    /** The memories under review (active, not waiting), by id. */
    readonly memories: Map<number, MemoryOutline>,
    /** Their ids in journal order. */
    public order: number[],
  ) {}

  /** What was written since the last deep sleep (by anyone but deep sleep itself), oldest first. */
  static async gather(deps: SleepStepDeps, stats: Record<string, number>): Promise<Review> {
    const start = await readCursor(deps.db, REVIEW_CURSOR);
    const changes = await deps.store.writesSince(start, 'deep-sleep');
    const fresh: number[] = [];
    let end = start;
    for (const c of changes) {
      if (!fresh.includes(c.memoryId)) {
        if (fresh.length === MAX_REVIEWED_PER_NIGHT) break;
        fresh.push(c.memoryId);
      }
      end = c.id;
    }
    const memories = await deps.store.activeOutlines(fresh);
    const review = new Review(
      stats,
      changes,
      start,
      end,
      memories,
      fresh.filter((id) => memories.has(id)),
    );
    stats.reviewed = memories.size;
    return review;
  }

  /**
   * The reviewed memories are kept in journal order. When a round's calls cannot show all of them,
   * the first one left out (`id`) and everything after it wait for the next night (the cursor stops
   * before them): with a small context the cap on calls must slow the review down, not skip memories.
   */
  waitFrom(id: number | undefined): void {
    const at = id === undefined ? -1 : this.order.indexOf(id);
    if (at < 0) return;
    for (const later of this.order.slice(at)) {
      this.memories.delete(later);
      this.waiting.add(later);
    }
    this.order = this.order.slice(0, at);
    this.stats.reviewed = this.order.length;
    this.stats.deferred_memories = this.waiting.size;
  }

  /** Where the cursor moves once the review is done: past what was reviewed, before the first memory left waiting. */
  cursor(): number {
    const firstWaiting = this.changes.findIndex((c) => this.waiting.has(c.memoryId));
    if (firstWaiting < 0) return this.end;
    return firstWaiting > 0 ? this.changes[firstWaiting - 1]!.id : this.start;
  }
}

/** Each reviewed memory's nearest memories by recall over the whole store (itself left out): what it may contradict or repeat. */
export async function nearestNeighbours(deps: SleepStepDeps, review: Review): Promise<Map<number, number[]>> {
  const neighbours = new Map<number, number[]>();
  for (const [id, m] of review.memories) {
    const hits = await deps.recall.semantic({ query: m.content.slice(0, 500), limit: NEIGHBOURS + 1 });
    neighbours.set(id, hits.flatMap((h) => (h.link.kind === 'memory' && h.link.memoryId !== id ? [h.link.memoryId] : [])).slice(0, NEIGHBOURS));
  }
  return neighbours;
}
