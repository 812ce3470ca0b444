// Models on disk (the layout is in model-paths.ts): the `.partial/` files a download resumes from,
// the verified set staged with its manifest and renamed over the installed folder — a failure never
// replaces a working install — the swap a crash interrupted finished on the next look, and the
// installed models listed, checked against their manifests and removed.
import fs from 'node:fs/promises';
import path from 'node:path';
import { ModelError, type ModelDtype, type ModelTask } from './catalog.js';
import { isDownloading } from './active-downloads.js';
import { exists, fileSize, folderSize, isObject, onDisk, readdirSafe, readJson, removeEmpty } from './disk-io.js';
import { sha256OfFile, type RemoteFile } from './host-files.js';
import {
  fileIn,
  ID_PART,
  isFilePath,
  isModelId,
  MANIFEST_FILE,
  modelDir,
  newTrashDir,
  PARTIAL_DIR,
  PARTIAL_RECORD,
  partialDir,
  STAGING_DIR,
  stagingDir,
  trashOrgDir,
} from './model-paths.js';

export interface ModelManifest {
  format: 1;
  id: string;
  task: ModelTask;
  dtype: ModelDtype;
  /** The host the files came from (a mirror is worth knowing when a file turns out bad). */
  host: string;
  installedAt: string;
  files: { path: string; size: number; sha256: string }[];
}

export interface InstalledModel {
  id: string;
  dir: string;
  manifest: ModelManifest;
  /** Everything in the model folder except an unfinished download of a newer version. */
  bytesOnDisk: number;
}

// ── an unfinished download ──

/**
 * Keeps partial files only when they belong to the same remote version: resuming a file that
 * changed on the host would splice two versions together. Returns the bytes kept of each file.
 */
export async function keptPartials(partial: string, plan: RemoteFile[]): Promise<Map<string, number>> {
  const previous = await readJson(path.join(partial, PARTIAL_RECORD));
  const known = isObject(previous) && isObject(previous.files) ? previous.files : {};
  const have = new Map<string, number>();
  for (const file of plan) {
    const target = fileIn(partial, file.path);
    const size = await fileSize(target);
    if (size === undefined) continue;
    const before = known[file.path];
    const same = isObject(before) && before.size === file.size && before.sha256 === file.sha256 && before.gitSha1 === file.gitSha1;
    if (!same || size > file.size) await fs.rm(target, { force: true });
    else have.set(file.path, size);
  }
  return have;
}

/** Records which remote version the partial files are of, for keptPartials on a later start. */
export async function writePartialRecord(partial: string, plan: RemoteFile[]): Promise<void> {
  const record = { files: Object.fromEntries(plan.map((f) => [f.path, { size: f.size, sha256: f.sha256, gitSha1: f.gitSha1 }])) };
  await onDisk(async () => {
    await fs.mkdir(partial, { recursive: true });
    await fs.writeFile(path.join(partial, PARTIAL_RECORD), JSON.stringify(record));
  });
}

/** Bytes of an unfinished download waiting in `.partial/` (0 when there is none). */
export async function partialBytes(modelsDir: string, id: string): Promise<number> {
  const dir = partialDir(modelsDir, id);
  return (await exists(dir)) ? folderSize(dir, PARTIAL_RECORD) : 0;
}

// ── installing ──

/** Moves the verified files from `.partial/` into staging with the manifest, then swaps them in. */
export async function installVerified(modelsDir: string, manifest: ModelManifest): Promise<void> {
  const id = manifest.id;
  const partial = partialDir(modelsDir, id);
  const staging = stagingDir(modelsDir, id);
  await onDisk(async () => {
    await fs.rm(staging, { recursive: true, force: true });
    for (const file of manifest.files) {
      const to = fileIn(staging, file.path);
      await fs.mkdir(path.dirname(to), { recursive: true });
      await fs.rename(fileIn(partial, file.path), to);
    }
    await fs.writeFile(path.join(staging, MANIFEST_FILE), JSON.stringify(manifest, null, 2));
  });
  // From here the verified set is complete on disk: settle() finishes the swap after a crash.
  await onDisk(() => swapIn(modelsDir, id), 'The model folder is in use; close what uses the model and download again.');
}

/** Renames the staged set over the installed folder; both renames stay on one filesystem. */
async function swapIn(modelsDir: string, id: string): Promise<void> {
  const dir = modelDir(modelsDir, id);
  const staging = stagingDir(modelsDir, id);
  const trash = newTrashDir(modelsDir, id);
  if (await exists(dir)) {
    await fs.mkdir(path.dirname(trash), { recursive: true });
    await fs.rename(dir, trash);
  }
  await fs.mkdir(path.dirname(dir), { recursive: true });
  await fs.rename(staging, dir);
  await fs.rm(trash, { recursive: true, force: true });
  await removeEmpty(path.dirname(staging), path.dirname(trash), path.dirname(path.dirname(staging)), path.dirname(path.dirname(trash)));
}

/** Finishes a swap a crash interrupted and clears leftovers of replaced versions. */
export async function settle(modelsDir: string, id: string): Promise<void> {
  const dir = modelDir(modelsDir, id);
  const staging = stagingDir(modelsDir, id);
  if (!(await exists(dir)) && (await exists(path.join(staging, MANIFEST_FILE)))) {
    await fs.mkdir(path.dirname(dir), { recursive: true });
    await fs.rename(staging, dir).catch(() => undefined);
  }
  const [, name] = id.split('/') as [string, string];
  const trashOrg = trashOrgDir(modelsDir, id);
  for (const entry of await fs.readdir(trashOrg).catch(() => [] as string[])) {
    if (entry.startsWith(`${name}-`)) await fs.rm(path.join(trashOrg, entry), { recursive: true, force: true }).catch(() => undefined);
  }
}

// ── installed models ──

/** Models with a manifest, i.e. downloaded completely by the downloader; sorted by id. */
export async function installedModels(modelsDir: string): Promise<InstalledModel[]> {
  const root = path.resolve(modelsDir);
  const ids = new Set<string>();
  for (const base of [root, path.join(root, STAGING_DIR)]) {
    for (const org of await readdirSafe(base)) {
      if (!org.isDirectory() || !ID_PART.test(org.name)) continue;
      for (const name of await readdirSafe(path.join(base, org.name))) {
        const id = `${org.name}/${name.name}`;
        if (name.isDirectory() && isModelId(id)) ids.add(id);
      }
    }
  }
  const found: InstalledModel[] = [];
  for (const id of [...ids].sort()) {
    if (!isDownloading(modelsDir, id)) await settle(modelsDir, id).catch(() => undefined);
    const dir = modelDir(modelsDir, id);
    const manifest = await readManifest(dir, id);
    if (!manifest) continue;
    found.push({ id, dir, manifest, bytesOnDisk: await folderSize(dir, PARTIAL_DIR) });
  }
  return found;
}

/**
 * Checks an installed model's files against its manifest: by size (fast, the default) or also by
 * sha256 (`full`, reads every byte). Resolves with the manifest or rejects naming the bad file.
 */
export async function checkModel(modelsDir: string, id: string, options: { full?: boolean } = {}): Promise<ModelManifest> {
  const dir = modelDir(modelsDir, id);
  const manifest = await readManifest(dir, id);
  if (!manifest) throw new ModelError('not_installed', `The model "${id}" is not downloaded.`);
  for (const file of manifest.files) {
    const full = fileIn(dir, file.path);
    const size = await fileSize(full);
    if (size === undefined) {
      throw new ModelError('integrity', `${file.path} of "${id}" is missing. Download the model again.`, file.path);
    }
    if (size !== file.size) {
      throw new ModelError(
        'integrity',
        `${file.path} of "${id}" is ${size < file.size ? 'truncated' : 'too long'} (${size} of ${file.size} bytes). Download the model again.`,
        file.path,
      );
    }
    if (options.full && (await sha256OfFile(full)) !== file.sha256) {
      throw new ModelError('integrity', `${file.path} of "${id}" is damaged (its checksum changed). Download the model again.`, file.path);
    }
  }
  return manifest;
}

/** Removes a model with any unfinished download of it; false when there was nothing to remove. */
export async function deleteModel(modelsDir: string, id: string): Promise<boolean> {
  const dir = modelDir(modelsDir, id);
  if (isDownloading(modelsDir, id)) throw new ModelError('busy', `"${id}" is downloading; stop the download before removing it.`);
  const staging = stagingDir(modelsDir, id);
  const found = (await exists(dir)) || (await exists(staging));
  await onDisk(async () => {
    await fs.rm(dir, { recursive: true, force: true });
    await fs.rm(staging, { recursive: true, force: true });
  }, `"${id}" is in use; close what uses the model and try again.`);
  await removeEmpty(path.dirname(dir), path.dirname(staging), path.dirname(path.dirname(staging)));
  return found;
}

async function readManifest(dir: string, id: string): Promise<ModelManifest | undefined> {
  const value = await readJson(path.join(dir, MANIFEST_FILE));
  if (!isObject(value) || value.format !== 1 || value.id !== id || !Array.isArray(value.files)) return undefined;
  const filesOk = value.files.every(
    (f: unknown) => isObject(f) && typeof f.path === 'string' && isFilePath(f.path) && typeof f.size === 'number' && typeof f.sha256 === 'string',
  );
  return filesOk ? (value as unknown as ModelManifest) : undefined;
}
