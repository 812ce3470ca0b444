// One download at a time per model and models folder, known to everything that touches the folder
// (removing a model or settling its leftovers while it downloads would pull files from under it).
import path from 'node:path';

const active = new Set<string>();

function activeKey(modelsDir: string, id: string): string {
  return `${path.resolve(modelsDir)}\0${id}`;
}

export function isDownloading(modelsDir: string, id: string): boolean {
  return active.has(activeKey(modelsDir, id));
}

/** Marks the model as downloading until `run` settles; throws `onBusy()` instead when it already is. */
export async function whileDownloading<T>(modelsDir: string, id: string, onBusy: () => Error, run: () => Promise<T>): Promise<T> {
  const key = activeKey(modelsDir, id);
  if (active.has(key)) throw onBusy();
  active.add(key);
  try {
    return await run();
  } finally {
    active.delete(key);
  }
}
