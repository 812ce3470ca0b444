// The safety copies themselves: the one writer every copy goes through (the nightly snapshot, "Back
// up now", the scheduled copy into the person's folder, the copy taken before a restore), the small
// manifest written beside each, and reading a folder of them back as a list.
//
// A copy is PGlite's own dump of its data folder (a gzipped tarball that `loadDataDir` opens),
// written aside, synced and renamed, so a kill mid-write never leaves a truncated file that looks
// complete. Its manifest (`<copy>.json`) says when and why it was made and what it holds, counted
// from the database at the moment of the dump: listing many copies then reads a few bytes each
// instead of unpacking them.
import fs from 'node:fs';
import path from 'node:path';
import type { BackupCounts, BackupKind } from '../../shared/api/backups.js';
import { asPGlite } from '../db/database.js';
import type { Database } from '../db/open.js';
import { migrations } from '../db/migrations/index.js';
import { list as listMemories } from '../memory/reads.js';
import { writeFileAtomic } from './switch.js';

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
  /** Told as the dump and each write finish (for a progress bar). */
  onProgress?: (phase: 'dumping' | 'writing', done: number, total: number) => void;
}

export interface WrittenCopy {
  bytes: number;
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
  for (const [i, dir] of dirs.entries()) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = path.join(dir, name);
    try {
      writeFileAtomic(file, bytes);
      const manifestFile = manifestPath(file, info.manifestDir);
      fs.mkdirSync(path.dirname(manifestFile), { recursive: true, mode: 0o700 });
      writeFileAtomic(manifestFile, JSON.stringify(manifest, null, 2));
    } catch (err) {
      for (const f of [`${file}.partial`, `${manifestPath(file, info.manifestDir)}.partial`]) fs.rmSync(f, { force: true });
      throw err;
    }
    files.push(file);
    info.onProgress?.('writing', i + 2, total);
  }
  return { bytes: bytes.length, manifest, files };
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

/** Removes a copy and its manifest. */
export function removeCopy(copyFile: string, manifestDir?: string): void {
  fs.rmSync(copyFile, { force: true });
  fs.rmSync(manifestPath(copyFile, manifestDir), { force: true });
}
