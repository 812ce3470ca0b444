// The safety copies themselves: the one writer every copy goes through (the nightly snapshot, "Back
// up now", the scheduled copy into the person's folder, the copy taken before a restore), the small
// manifest written beside each, and reading a folder of them back as a list.
//
// A copy is PGlite's own dump of its data folder (a gzipped tarball that `loadDataDir` opens),
// written aside, synced and renamed, so a kill mid-write never leaves a truncated file that looks
// complete. Its manifest (`<copy>.json`) says when and why it was made and what it holds, counted
// from the database at the moment of the dump: listing many copies then reads a few bytes each
// instead of unpacking them.
//
// A copy also holds the pictures as they were at that moment — the images attached in chat
// (`attachments/`) and the companion's pictures (`companion/`) — in a folder beside it
// (`<copy without .tar.gz>.files/`, for nightly copies beside their manifests). Both kinds of file are
// immutable and named by their content, so each is hard-linked, not copied: a night's copy of a
// thousand pictures costs a thousand directory entries, not their bytes. Where linking fails (the
// person's folder on another disk) a file is linked from the newest earlier copy there, or else copied.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { BackupCounts, BackupKind } from '../../shared/api/backups.js';
import { asPGlite } from '../db/database.js';
import type { Database } from '../db/open.js';
import { migrations } from '../db/migrations/index.js';
import { attachmentsDir, storedImages } from '../attachments/store.js';
import { avatarDir, storedAvatars } from '../companion/avatar.js';
import { list as listMemories } from '../memory/reads.js';
import { FILES_SUFFIX, writeFileAtomic, type FileFolder } from './switch.js';

export const COPY_SUFFIX = '.tar.gz';
export const MANIFEST_SUFFIX = '.json';

export interface CopyManifest {
  format: 1;
  kind: BackupKind;
  createdAt: string;
  /** Nightly copies: the sleep day and the run that wrote it. */
  sleepDay: string | null;
  runId: number | null;
  bytes: number;
  /** The schema the copy's database is at (the newest migration this version knows). */
  schemaVersion: number;
  appVersion: string | null;
  counts: BackupCounts;
  /** Rows per table at the dump, compared after a restore. */
  tables: Record<string, number>;
  /** The pictures the copy holds (its `.files` folder); absent: the database only (an older copy). */
  files?: CopyFiles;
}

export interface CopyFiles {
  /** The images attached in chat, each named by its content's SHA-256. */
  attachments: { name: string; bytes: number }[];
  /** The companion's pictures, with their whole SHA-256. */
  companion: { name: string; bytes: number; sha256: string }[];
  /** All their bytes (on disk mostly shared with the data folder and other copies: hard links). */
  bytes: number;
}

/** Where a copy's pictures are: `x.tar.gz` → `x.files` (beside its manifest); a kept database folder `d` → `d.files`. */
export function filesPath(copy: string, manifestDir?: string): string {
  const base = path.basename(copy);
  const stem = base.endsWith(COPY_SUFFIX) ? base.slice(0, -COPY_SUFFIX.length) : base;
  return path.join(manifestDir ?? path.dirname(copy), stem + FILES_SUFFIX);
}

/** The data folder's picture folders, each with what lists its files. */
export const FILE_SOURCES: Record<FileFolder, { dir: (dataDir: string) => string; list: (dir: string) => { name: string; bytes: number }[] }> = {
  attachments: { dir: attachmentsDir, list: storedImages },
  companion: { dir: avatarDir, list: storedAvatars },
};

const sha256File = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/**
 * Puts `target` in place as the same file as the first source that is there: a hard link where the
 * file system allows, else a copy written aside and renamed. Returns how, or null when no source is there.
 */
export function placeFile(sources: string[], target: string): 'linked' | 'copied' | null {
  for (const source of sources) {
    try {
      fs.linkSync(source, target);
      return 'linked';
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') return 'linked';
      // ENOENT: this source is gone; EXDEV/EPERM/…: another disk or a file system without links.
    }
  }
  for (const source of sources) {
    try {
      fs.copyFileSync(source, `${target}.partial`);
      fs.renameSync(`${target}.partial`, target);
      return 'copied';
    } catch {
      fs.rmSync(`${target}.partial`, { force: true });
    }
  }
  return null;
}

/** The newest copy's picture folder already in `dir` (to link from when the data folder is on another disk). */
function newestFilesDir(dir: string): string | null {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return null;
  }
  const found = names.filter((n) => n.endsWith(FILES_SUFFIX) && !n.startsWith('.')).sort();
  return found.length > 0 ? path.join(dir, found[found.length - 1]!) : null;
}

/**
 * Picture folders in `filesDir` whose copy is no longer in `copyDir` (removed by hand, or by a
 * retention from before copies and their pictures went together), and half-built ones: removed.
 */
export function sweepOrphanFiles(copyDir: string, filesDir: string): void {
  let names: string[];
  try {
    names = fs.readdirSync(filesDir);
  } catch {
    return;
  }
  for (const name of names) {
    const full = path.join(filesDir, name);
    if (name.endsWith(`${FILES_SUFFIX}.partial`)) fs.rmSync(full, { recursive: true, force: true });
    else if (name.endsWith(FILES_SUFFIX) && !fs.existsSync(path.join(copyDir, name.slice(0, -FILES_SUFFIX.length) + COPY_SUFFIX))) {
      fs.rmSync(full, { recursive: true, force: true });
    }
  }
}

/**
 * Builds a copy's picture folder at `target` (aside, then renamed): every picture of the data
 * folder, linked (or copied). Returns what it holds and how many files were linked and copied.
 */
export function writeFiles(dataDir: string, target: string): CopyFiles & { linked: number; copied: number } {
  const aside = `${target}.partial`;
  fs.rmSync(aside, { recursive: true, force: true });
  const earlier = newestFilesDir(path.dirname(target));
  const out: CopyFiles & { linked: number; copied: number } = { attachments: [], companion: [], bytes: 0, linked: 0, copied: 0 };
  for (const folder of Object.keys(FILE_SOURCES) as FileFolder[]) {
    const source = FILE_SOURCES[folder];
    const from = source.dir(dataDir);
    fs.mkdirSync(path.join(aside, folder), { recursive: true, mode: 0o700 });
    for (const f of source.list(from)) {
      const sources = [path.join(from, f.name)];
      // Linking from the data folder fails across disks: an earlier copy there holds the same content under the same name.
      if (earlier) {
        const prior = path.join(earlier, folder, f.name);
        if (fs.statSync(prior, { throwIfNoEntry: false })?.size === f.bytes) sources.push(prior);
      }
      const target = path.join(aside, folder, f.name);
      const how = placeFile(sources, target);
      if (!how) continue; // Removed since it was listed (an unused image the purge took): not part of this moment.
      out[how]++;
      out.bytes += f.bytes;
      if (folder === 'attachments') out.attachments.push(f);
      else out.companion.push({ ...f, sha256: sha256File(target) });
    }
  }
  fs.renameSync(aside, target);
  return out;
}

/**
 * The nightly copies' manifests live apart from them (`<dataDir>/backups/.nightly/`): the sleep
 * cycle's folder keeps holding only its copies.
 */
export function nightlyManifestDir(snapshotsDir: string): string {
  return path.join(path.dirname(snapshotsDir), 'backups', '.nightly');
}

/** Where a copy's manifest is: beside it, or in `manifestDir` when one is given. */
export function manifestPath(copyFile: string, manifestDir?: string): string {
  return path.join(manifestDir ?? path.dirname(copyFile), path.basename(copyFile) + MANIFEST_SUFFIX);
}

export const SCHEMA_VERSION = Math.max(0, ...migrations.map((m) => m.version));

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Rows in every table of the database, read in full (a count scans each table's pages). The tables
 * come from the catalogue: this room treats the database as a whole, as the dump itself does, and
 * names no table of another room.
 */
export async function tableCounts(db: Database): Promise<Record<string, number>> {
  const names = (await db.query<{ name: string }>(`SELECT tablename AS name FROM pg_catalog.pg_tables WHERE schemaname = 'public' ORDER BY tablename`)).rows;
  const out: Record<string, number> = {};
  for (const { name } of names) {
    out[name] = (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM public.${quoteIdent(name)}`)).rows[0]!.n;
  }
  return out;
}

/** What a person would recognise: conversations, messages (every version kept) and active memories. */
export async function contentCounts(db: Database, tables?: Record<string, number>): Promise<{ counts: BackupCounts; tables: Record<string, number> }> {
  const t = tables ?? (await tableCounts(db));
  const memories = (await listMemories(db, { limit: 1 })).total;
  return { counts: { conversations: t.conversations ?? 0, messages: t.messages ?? 0, memories }, tables: t };
}

export interface WriteCopyInfo {
  kind: BackupKind;
  createdAt: Date;
  sleepDay?: string | null;
  runId?: number | null;
  appVersion?: string | null;
  /** Where the manifest goes (default: beside the copy). */
  manifestDir?: string;
  /** The database to count rows in, when the one dumped is not the one to query (tests of the keeping alone). */
  countsFrom?: Database;
  /** The data folder whose pictures the copy holds too (attachments/, companion/); without it, the database only. */
  dataDir?: string;
  /** Told as the dump and each write finish (for a progress bar). */
  onProgress?: (phase: 'dumping' | 'writing', done: number, total: number) => void;
}

export interface WrittenCopy {
  /** The database file's bytes. */
  bytes: number;
  /** How the pictures went in: hard links, or copies where linking failed. */
  linked: number;
  copied: number;
  manifest: CopyManifest;
  files: string[];
}

/**
 * Dumps the database once and writes the copy, named `name`, into each folder given (the data
 * folder's copies, the person's chosen folder), each with its manifest. A folder that fails is
 * reported by the error; a write that failed leaves no partial file behind.
 */
export async function writeCopy(db: Database, dirs: string[], name: string, info: WriteCopyInfo): Promise<WrittenCopy> {
  if (!name.endsWith(COPY_SUFFIX) || name.includes('/') || name.includes('\\')) throw new Error(`not a copy name: ${name}`);
  const total = dirs.length + 1;
  info.onProgress?.('dumping', 0, total);
  const { counts, tables } = await contentCounts(info.countsFrom ?? db);
  const dump = (await asPGlite(db, 'A safety copy').dumpDataDir('gzip')) as Blob;
  const bytes = Buffer.from(await dump.arrayBuffer());
  info.onProgress?.('dumping', 1, total);
  const manifest: CopyManifest = {
    format: 1,
    kind: info.kind,
    createdAt: info.createdAt.toISOString(),
    sleepDay: info.sleepDay ?? null,
    runId: info.runId ?? null,
    bytes: bytes.length,
    schemaVersion: SCHEMA_VERSION,
    appVersion: info.appVersion ?? null,
    counts,
    tables,
  };
  const files: string[] = [];
  let linked = 0;
  let copied = 0;
  for (const [i, dir] of dirs.entries()) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = path.join(dir, name);
    const picturesDir = filesPath(file, info.manifestDir);
    let written = manifest;
    try {
      if (info.dataDir) {
        fs.mkdirSync(path.dirname(picturesDir), { recursive: true, mode: 0o700 });
        sweepOrphanFiles(dir, path.dirname(picturesDir));
        // The pictures first: a copy file is never there without the pictures its manifest lists.
        const pictures = writeFiles(info.dataDir, picturesDir);
        linked += pictures.linked;
        copied += pictures.copied;
        written = { ...manifest, files: { attachments: pictures.attachments, companion: pictures.companion, bytes: pictures.bytes } };
      }
      writeFileAtomic(file, bytes);
      const manifestFile = manifestPath(file, info.manifestDir);
      fs.mkdirSync(path.dirname(manifestFile), { recursive: true, mode: 0o700 });
      writeFileAtomic(manifestFile, JSON.stringify(written, null, 2));
    } catch (err) {
      for (const f of [`${file}.partial`, `${manifestPath(file, info.manifestDir)}.partial`]) fs.rmSync(f, { force: true });
      if (!fs.existsSync(file)) fs.rmSync(picturesDir, { recursive: true, force: true });
      fs.rmSync(`${picturesDir}.partial`, { recursive: true, force: true });
      throw err;
    }
    files.push(file);
    if (i === 0) manifest.files = written.files;
    info.onProgress?.('writing', i + 2, total);
  }
  return { bytes: bytes.length, linked, copied, manifest, files };
}

/** A copy's manifest, or null when it has none (written before manifests) or it is unreadable. */
export function readManifest(copyFile: string, manifestDir?: string): CopyManifest | null {
  try {
    const m = JSON.parse(fs.readFileSync(manifestPath(copyFile, manifestDir), 'utf8')) as Partial<CopyManifest>;
    if (m.format !== 1 || typeof m.createdAt !== 'string' || typeof m.kind !== 'string' || !m.counts) return null;
    return m as CopyManifest;
  } catch {
    return null;
  }
}

/** Removes a copy, its manifest and its pictures (links: the data folder's own files stay). */
export function removeCopy(copyFile: string, manifestDir?: string): void {
  fs.rmSync(copyFile, { force: true });
  fs.rmSync(manifestPath(copyFile, manifestDir), { force: true });
  fs.rmSync(filesPath(copyFile, manifestDir), { recursive: true, force: true });
}
