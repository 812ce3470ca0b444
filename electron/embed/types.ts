// The contract between an embedding model (on this device, or a model server's) and what uses it (the embedding queue, recall,
// near-duplicate checks). Kept apart from the implementation so those can be written and read
// without loading transformers.js.

/** A loaded sentence-embedding model. */
export interface Embedder {
  /** The model id the vectors come from, e.g. `Xenova/multilingual-e5-small`; stored with each vector. */
  readonly modelId: string;
  /** Length of every vector this model returns. */
  readonly dimensions: number;
  /**
   * Unit-length (L2-normalised, mean-pooled) vectors, one per text, in order. Rejects with an
   * EmbedError when the model cannot run; a rejected call never leaves a half-written result.
   */
  embed(texts: string[], options?: { signal?: AbortSignal }): Promise<Float32Array[]>;
  /** Frees the model (ends its worker). Later embed() calls reject. */
  close(): Promise<void>;
}

export type EmbedErrorCode =
  | 'model_not_installed' // no such folder, or a required file is missing
  | 'model_broken' // the files are there but the runtime refused them (truncated, wrong format)
  | 'runtime_missing' // transformers.js / onnxruntime cannot be loaded in this build
  | 'worker_crashed' // the worker died mid-call; the next call starts a fresh one
  | 'cancelled'
  // A model server's embedding model (server-embedder.ts):
  | 'server_unreachable' // refused the connection, timed out, or answered 5xx/429: try again later, words meanwhile
  | 'server_refused'; // answered, but no (a wrong key, no such model, a connection that cannot embed, an answer that is no vector)

export class EmbedError extends Error {
  constructor(
    readonly code: EmbedErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'EmbedError';
  }
}
