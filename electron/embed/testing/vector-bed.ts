// For the embedding tests: a real on-disk PGlite from the migrated template and the real tiny BERT
// opened twice — under its own id and under a second id, the same weights being "another model" as
// far as the queue and recall can tell.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase, type Database } from '../../db/open.js';
import { dbTemplate, tempDataDir } from '../../testing/host.js';
import { VectorSlot } from '../active.js';
import { openEmbedder } from '../embedder.js';
import type { Embedder } from '../types.js';

export const MODEL = 'anima-test/tiny-bert';
export const OTHER = 'anima-test/tiny-bert-copy';
const SOURCE = fileURLToPath(new URL(`../../models/testing/models/${MODEL}`, import.meta.url));

export interface VectorBed {
  db: Database;
  /** The slot the queue publishes the model to and recall reads it from. */
  vectors: VectorSlot;
  dir: string;
  modelsDir: string;
  tiny: Embedder;
  other: Embedder;
  close(): Promise<void>;
}

/**
 * How long a test file's hook may take to open the bed: it starts two embedding workers (tsx, ONNX
 * runtime, a model each), minutes on two shared cores beside a CPU hog. A bound for a hang only.
 */
export const VECTOR_BED_MS = 600_000;

export async function openVectorBed(prefix: string): Promise<VectorBed> {
  const dir = tempDataDir(prefix);
  const db = await openDatabase(dir, { template: dbTemplate() });
  const modelsDir = path.join(dir, 'models');
  for (const id of [MODEL, OTHER]) fs.cpSync(SOURCE, path.join(modelsDir, id), { recursive: true });
  const tiny = await openEmbedder({ modelsDir, modelId: MODEL });
  const other = await openEmbedder({ modelsDir, modelId: OTHER });
  return {
    db,
    vectors: new VectorSlot(),
    dir,
    modelsDir,
    tiny,
    other,
    async close() {
      await tiny.close();
      await other.close();
      await db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The real model's identity with another embed function: delays, failures, counts, reshaped texts. */
export function wrap(e: Embedder, embed: Embedder['embed'], overrides: Partial<Pick<Embedder, 'modelId' | 'dimensions'>> = {}): Embedder {
  return { modelId: overrides.modelId ?? e.modelId, dimensions: overrides.dimensions ?? e.dimensions, embed, close: async () => {} };
}
