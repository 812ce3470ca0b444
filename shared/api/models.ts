// On-device models: the catalogue with what this computer has of each, downloads and their
// progress, search by meaning's state, and the models.* methods.
import { z } from 'zod';
import type { ApiErrorShape } from './errors.js';
import { empty, localModelId } from './fields.js';
import { serverEmbeddingChoice, type Settings } from './settings.js';

export type LocalModelTask = 'embedding' | 'chat';
/** available: nothing on disk; partial: a stopped download that resumes; downloading: now; installed: complete and checked. */
export type LocalModelState = 'available' | 'partial' | 'downloading' | 'installed';

/** A download's progress (the `models.progress` event), at most four a second per model. */
export interface ModelDownloadProgress {
  id: string;
  phase: 'checking' | 'downloading' | 'installing' | 'done';
  /** The file being fetched (path inside the repository). */
  file?: string;
  fileIndex: number;
  fileCount: number;
  /** Bytes on disk for this download, including what earlier attempts left. */
  bytesDone: number;
  bytesTotal: number;
  /** Smoothed over a few seconds; 0 until bytes arrive. */
  bytesPerSecond: number;
  /** null while the speed is unknown. */
  secondsLeft: number | null;
}

/**
 * Where search by meaning stands (the `embeddings.status` event and models.embeddingStatus).
 * off: no model chosen; unavailable: chosen, but this build cannot store vectors or the model would
 * not load (`error` says why); embedding: vectors are being made for what was written before
 * (done/total); ready: every message, memory and diary block has a vector of `model`; paused: the
 * model server stopped answering (`error` says how) — search is by words until it answers again, and
 * nothing waiting for a vector is lost.
 */
export interface EmbeddingsStatus {
  model: string | null;
  state: 'off' | 'unavailable' | 'embedding' | 'ready' | 'paused';
  /** Where the vectors come from, once a model is chosen: this device, or a model server (`model` is then its name there). */
  source?: 'device' | 'server';
  /** For a server's model: the connection's name. */
  connection?: string;
  done: number;
  total: number;
  /** New messages and memories waiting for their vectors (the queue keeping up; not part of done/total). */
  queued: number;
  /** Recall ranks by meaning too (a model in use and memory.vectorWeight above 0); otherwise vectors only spot repeated memories. */
  searching: boolean;
  error: string | null;
}

/** Why the last download of a model failed, kept until the next attempt. */
export interface LocalModelError extends ApiErrorShape {
  /** For model_disk_full: free bytes on the disk when it was checked… */
  freeBytes?: number;
  /** …and roughly what the download still needed, with the room Anima leaves free. */
  neededBytes?: number;
}

/** A catalogue model with what this computer has of it. */
export interface LocalModel {
  /** Hugging Face id, `org/name`. */
  id: string;
  task: LocalModelTask;
  name: string;
  /** Roughly what it downloads (the host's listing gives the exact size at download time). */
  approxBytes: number;
  /** BCP 47 primary language tags it handles well. */
  languages: string[];
  licence: string;
  /** What it is good for, in English (the UI has its own words for the catalogue's models). */
  goodFor: string;
  /** Offered only to tests (ANIMA_TEST_MODELS=1). */
  testOnly: boolean;
  /** Embedding models: vector length. */
  dimensions: number | null;
  /** Chat models: tokens of context. */
  contextLength: number | null;
  state: LocalModelState;
  /** Set when installed. */
  installed: { bytesOnDisk: number; installedAt: string; host: string } | null;
  /** Bytes of a stopped download waiting to resume (0 when none). */
  partialBytes: number;
  /** The latest progress while downloading. */
  progress: ModelDownloadProgress | null;
  error: LocalModelError | null;
  /** What uses it now: memory search, and on-device model connections (providers) naming it. */
  usedBy: { embeddings: boolean; providers: { id: string; name: string }[] };
}

export const modelsInputs = {
  /** The on-device model catalogue with what is downloaded, downloading or waiting to resume. */
  'models.list': empty,
  /** Start (or resume) a download; returns at once. Progress arrives as models.progress, the end as models.changed. */
  'models.download': z.object({ id: localModelId }).strict(),
  /** Stop a download; what arrived is kept and the next download continues from it. */
  'models.cancel': z.object({ id: localModelId }).strict(),
  /** Remove a model's files (and any stopped download of it); memory search stops using it. */
  'models.delete': z.object({ id: localModelId }).strict(),
  /** The embedding model memory search uses; null = none (search by words only). */
  'models.useForEmbeddings': z.object({ id: localModelId.nullable() }).strict(),
  'models.embeddingStatus': empty,
  /**
   * Memory search through a connection's embedding model (OpenAI-compatible or Ollama), asked once
   * first: a model the server does not have, or a server that does not answer, is refused and changes
   * nothing. Clears the on-device choice; models.useForEmbeddings clears this one.
   */
  'models.useServerForEmbeddings': serverEmbeddingChoice,
} as const;

export interface ModelsOutputs {
  'models.list': LocalModel[];
  'models.download': LocalModel;
  'models.cancel': LocalModel;
  'models.delete': LocalModel;
  'models.useForEmbeddings': Settings;
  'models.embeddingStatus': EmbeddingsStatus;
  'models.useServerForEmbeddings': Settings;
}
