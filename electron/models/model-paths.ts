// Model ids and where a model's files live in the models folder.
//
// Layout, and why:
//   <org>/<name>/                the installed model, untouched until a new version fully verified
//   <org>/<name>/.partial/…      files being fetched, kept across cancel, crash and restart so a
//                                later start continues with HTTP Range instead of from zero
//   .staging/<org>/<name>/       a verified set with its manifest, renamed over the installed folder
//   .trash/<org>/<name>-<rand>/  the replaced version until it is removed
// The dot folders sit where a two-level `org/name` scan (installedModels's and electron/llm/local.ts's)
// never mistakes them for models.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { ModelError } from './catalog.js';

export const MANIFEST_FILE = 'anima-model.json';
export const PARTIAL_DIR = '.partial';
export const PARTIAL_RECORD = '.anima-partial.json';
export const STAGING_DIR = '.staging';
const TRASH_DIR = '.trash';

/** `org/name` as the hub spells ids; a leading letter or digit keeps `.`, `..` and our dot folders out. */
export const ID_PART = /^[A-Za-z0-9][\w.-]{0,95}$/;
const FILE_SEGMENT = /^[\w][\w.-]{0,199}$/;

export function isModelId(id: unknown): id is string {
  if (typeof id !== 'string') return false;
  const parts = id.split('/');
  return parts.length === 2 && parts.every((part) => ID_PART.test(part));
}

export function assertModelId(id: unknown): asserts id is string {
  if (!isModelId(id)) {
    throw new ModelError('invalid_id', `"${String(id)}" is not a model id: expected the form organisation/name.`);
  }
}

/** A relative path inside a model folder: plain segments, never our manifest. */
export function isFilePath(file: string): boolean {
  const parts = file.split('/');
  return parts.length <= 8 && parts.every((part) => FILE_SEGMENT.test(part)) && file !== MANIFEST_FILE;
}

/** The installed folder of a model; refuses anything that is not a plain `org/name`. */
export function modelDir(modelsDir: string, id: string): string {
  assertModelId(id);
  const root = path.resolve(modelsDir);
  const dir = path.join(root, ...id.split('/'));
  // Belt and braces: the id pattern already rules out separators and dot segments.
  if (path.dirname(path.dirname(dir)) !== root) throw new ModelError('invalid_id', `"${id}" is not a model id.`);
  return dir;
}

export function stagingDir(modelsDir: string, id: string): string {
  return path.join(path.resolve(modelsDir), STAGING_DIR, ...id.split('/'));
}

export function partialDir(modelsDir: string, id: string): string {
  return path.join(modelDir(modelsDir, id), PARTIAL_DIR);
}

/** The folder of a model's organisation under `.trash/`, where replaced versions wait to be removed. */
export function trashOrgDir(modelsDir: string, id: string): string {
  const [org] = id.split('/') as [string, string];
  return path.join(path.resolve(modelsDir), TRASH_DIR, org);
}

/** A fresh place in `.trash/` for the version being replaced. */
export function newTrashDir(modelsDir: string, id: string): string {
  const [, name] = id.split('/') as [string, string];
  return path.join(trashOrgDir(modelsDir, id), `${name}-${randomUUID().slice(0, 8)}`);
}

/** A file of the model under `dir`, from its `/`-separated path in the listing or manifest. */
export function fileIn(dir: string, file: string): string {
  return path.join(dir, ...file.split('/'));
}
