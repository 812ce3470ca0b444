// The embedding model a database's readers use right now — recall's vector branch and the memory
// store's near-duplicate check — registered by the embedding service when a model is set, so every
// caller of recall (passive recall, the tools, deep sleep, the API) gets it without being handed it.
// One per database object, like recall's in-memory index (recall/sidecar.ts).

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

const registry = new WeakMap<object, ActiveVectors>();

export function setActiveVectors(db: object, active: ActiveVectors | null): void {
  if (active) registry.set(db, active);
  else registry.delete(db);
}

export function activeVectors(db: object): ActiveVectors | null {
  return registry.get(db) ?? null;
}

/** A usable vector-branch weight: a positive finite number, anything else 0 (off). */
export function usableVectorWeight(w: unknown): number {
  return typeof w === 'number' && Number.isFinite(w) && w > 0 ? w : 0;
}
