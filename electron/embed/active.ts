// The embedding model the readers use right now — recall's vector branch, the memory store's
// near-duplicate check, deep sleep's merge candidates. The embedding service sets it when a model is
// ready; createHost hands the same slot to each reader, so who depends on it is visible in the wiring.

/** What readers may ask of the current model. */
export interface ActiveVectors {
  readonly modelId: string;
  readonly dimensions: number;
  /** Weight of recall's vector branch (the memory setting `vectorWeight`); 0 = the branch is off. */
  readonly weight: number;
  /**
   * The vector of a search text (the model's query prefix added), or null when the model did not
   * answer within `budgetMs`, failed, or `signal` fired. Never rejects.
   */
  embedQuery(text: string, budgetMs: number, signal?: AbortSignal): Promise<Float32Array | null>;
  /** Vectors of texts to be stored (passage prefix), e.g. a memory before it is saved; null as above. */
  embedPassages(texts: string[], budgetMs: number): Promise<(Float32Array | null)[] | null>;
}

/** One per host: written by the embedding service, read by everyone who searches or compares by meaning. */
export class VectorSlot {
  private active: ActiveVectors | null = null;

  /** The model in use, or null: without one everything works by words. */
  get(): ActiveVectors | null {
    return this.active;
  }

  set(active: ActiveVectors | null): void {
    this.active = active;
  }
}

/** A usable vector-branch weight: a positive finite number, anything else 0 (off). */
export function usableVectorWeight(w: unknown): number {
  return typeof w === 'number' && Number.isFinite(w) && w > 0 ? w : 0;
}
