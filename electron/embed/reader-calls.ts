// What readers use (the host's vector slot: recall, the near-duplicate check): model calls for a
// search text or a text about to be stored, each bounded by a time budget and never rejecting, the
// last queries' vectors cached, and the queue's batches waiting while a search gets its turn.
import type { ActiveVectors } from './active.js';
import type { Embedder } from './types.js';
import { clip } from './vectors.js';

/** How long a batch waits for searches in flight to get their query embedded first. */
const QUERY_PRIORITY_MS = 1000;
const QUERY_CACHE = 64;

export interface ReaderCallsDeps {
  /** The queue's model now (a reader holding an older one gets null). */
  current(): Embedder | null;
  closed(): boolean;
  /** What the current model wants in front of a query and of a stored text. */
  prefixes(): { query: string; passage: string };
}

export class ReaderCalls {
  private running = 0;
  private waiters: (() => void)[] = [];
  private readonly cache = new Map<string, Float32Array>();

  constructor(private readonly deps: ReaderCallsDeps) {}

  /** What readers may ask of `e`, published in the vector slot. */
  vectorsFor(e: Embedder, weight: number): ActiveVectors {
    return {
      modelId: e.modelId,
      dimensions: e.dimensions,
      weight,
      embedQuery: (text, budgetMs, signal) => this.embedQuery(e, text, budgetMs, signal),
      embedPassages: (texts, budgetMs) => this.embedPassages(e, texts, budgetMs),
    };
  }

  /** A search is waiting for its query's vector. */
  get searching(): boolean {
    return this.running > 0;
  }

  /** Resolves when the searches in flight have their answer, or after a second at most. */
  async searchesFirst(): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, QUERY_PRIORITY_MS);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  clearCache(): void {
    this.cache.clear();
  }

  private async embedQuery(e: Embedder, text: string, budgetMs: number, signal?: AbortSignal): Promise<Float32Array | null> {
    const input = this.deps.prefixes().query + clip(text);
    const key = `${e.modelId}\n${input}`;
    const cached = this.cache.get(key);
    if (cached) return cached;
    const out = await this.bounded(e, [input], budgetMs, signal);
    const v = out?.[0] ?? null;
    if (v && this.deps.current() === e) {
      if (this.cache.size >= QUERY_CACHE) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(key, v);
    }
    return v;
  }

  private async embedPassages(e: Embedder, texts: string[], budgetMs: number): Promise<(Float32Array | null)[] | null> {
    if (!texts.length) return [];
    const { passage } = this.deps.prefixes();
    return this.bounded(
      e,
      texts.map((t) => passage + clip(t)),
      budgetMs,
    );
  }

  /** One model call that gives up (null) at the deadline; batches wait for it to start first. */
  private async bounded(e: Embedder, inputs: string[], budgetMs: number, signal?: AbortSignal): Promise<Float32Array[] | null> {
    if (this.deps.closed() || this.deps.current() !== e || signal?.aborted || !(budgetMs > 0)) return null;
    this.running++;
    const ac = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const onAbort = () => ac.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const deadline = new Promise<null>((resolve) => {
      timer = setTimeout(() => {
        ac.abort();
        resolve(null);
      }, budgetMs);
      ac.signal.addEventListener('abort', () => resolve(null), { once: true });
    });
    try {
      const call = e.embed(inputs, { signal: ac.signal });
      // Past the deadline the call may still fail: that is no one's error any more.
      call.catch(() => {});
      const out = await Promise.race([call, deadline]);
      if (!out || out.length !== inputs.length || out.some((v) => v.length !== e.dimensions)) return null;
      return out;
    } catch {
      return null;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (--this.running === 0) for (const w of this.waiters.splice(0)) w();
    }
  }
}
