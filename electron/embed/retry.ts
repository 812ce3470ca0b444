// After a failed batch: wait (2 s, doubling, at most 5 minutes by default), then go on one text at a
// time until a batch works, so a text the model refuses is found; and give that text up for the run
// once the model has shown it works for others.
import type { Item } from './embedded-rows.js';

/** Retry after a failed batch: 2 s, doubling, at most 5 minutes. */
export const RETRY_BASE_MS = 2000;
export const RETRY_MAX_MS = 5 * 60_000;
/**
 * A text that failed this often while other texts were embedded in between is given up for this run
 * (logged); the next backfill tries it again. Without this one text the model refuses would hold the
 * queue in retries forever.
 */
const MAX_ATTEMPTS = 5;

/** Counts one more failure of the item; true when it is to be given up for this run. */
export function failedAgain(item: Item, embeddedSoFar: number): boolean {
  item.attempts = (item.attempts ?? 0) + 1;
  item.failedAt ??= embeddedSoFar;
  // Given up only when the model worked for other texts since this one first failed.
  return item.attempts >= MAX_ATTEMPTS && embeddedSoFar > item.failedAt;
}

export class Backoff {
  /** Failed batches in a row (0 = the last one worked). */
  failures = 0;
  /** After a failure, batches of one until one works, so a text the model refuses is found. */
  single = false;
  /** When the next batch may run (ms since the epoch; 0 = now). */
  retryAt = 0;
  lastError: string | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly baseMs: number,
    private readonly maxMs: number,
  ) {}

  /** Records a failed batch and sets the time of the next attempt. */
  failed(message: string): void {
    this.failures++;
    this.lastError = message;
    const delay = Math.min(this.maxMs, this.baseMs * 2 ** (this.failures - 1));
    this.retryAt = Date.now() + delay;
  }

  succeeded(): void {
    this.failures = 0;
    this.single = false;
    this.lastError = null;
  }

  /** A new model: nothing failed yet, and no retry is waiting. */
  reset(): void {
    this.succeeded();
    this.retryAt = 0;
    this.cancel();
  }

  waiting(): boolean {
    return Date.now() < this.retryAt;
  }

  /** Runs `retry` at the retry time (once, however often asked). */
  schedule(retry: () => void): void {
    if (this.timer) return;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        retry();
      },
      Math.max(0, this.retryAt - Date.now()),
    );
    // Never the reason the process stays up.
    this.timer.unref?.();
  }

  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
