// Export: one zip a person can take with them.
//
//   anima.json     versioned JSON of everything they would want back (reads.ts lists it), written
//                  section by section, a page of rows at a time — never one giant string
//   attachments/   the images the messages carry, as the files the data folder keeps (anima.json's
//                  messages hold their references)
//   companion/     the companion's pictures (settings.companion names the one it wears)
//   vault/         the same as markdown with YAML frontmatter (vault.ts)
//   anima.sql      the database as SQL for a plain PostgreSQL (sql-dump.ts)
//   manifest.json  versions and counts, last: a reader can tell what is inside without parsing the rest
//
// Written to `<file>.partial` and renamed only when complete (zip-writer.ts). Rows written while an
// export runs may or may not be in it: each page is read on its own, so the app stays usable.
import fs from 'node:fs';
import path from 'node:path';
import { ApiError, IMAGE_ID_PATTERN } from '../../shared/api.js';
import { nameOf } from '../../shared/companion-name.js';
import { AVATAR_NAME_PATTERN } from '../companion/avatar.js';
import type { Database } from '../db/open.js';
import { SECTIONS, attachmentIds, schemaVersion, vaultConversations, vaultDiary, vaultMemories, vaultMessages, vaultSelf } from './reads.js';
import { sqlDump } from './sql-dump.js';
import {
  VAULT_README,
  conversationHeader,
  conversationPath,
  diaryDayFile,
  diaryDayPath,
  dreamFile,
  dreamPath,
  memoryFile,
  memoryPath,
  messageSection,
  selfFile,
  type VaultDiaryBlock,
} from './vault.js';
import { ArchiveTooLarge, ZipFileWriter } from './zip-writer.js';

export const ARCHIVE_FORMAT = 'anima-archive';
export const ARCHIVE_FORMAT_VERSION = 1;

export type ExportPhase = 'data' | 'vault' | 'sql' | 'finishing';

export interface ExportProgress {
  phase: ExportPhase;
  /** Work done and in all, in rows (the SQL dump counts as much as the rows it holds); `total` is known from the start. */
  done: number;
  total: number;
}

export interface ExportOptions {
  db: Database;
  appVersion: string;
  /** The archive's path; written as `<file>.partial` first. */
  file: string;
  now?: () => Date;
  signal?: AbortSignal;
  onProgress?: (progress: ExportProgress) => void;
  /** Rows per read (tests make it small to cross page boundaries). */
  pageSize?: number;
  /** Leave the SQL dump out (the bench measures with and without). Default true. */
  sql?: boolean;
  /** This process holds the database alone (the CLI, the bench): the SQL dump needs no copy of it. */
  alone?: boolean;
  /** Where the attached images are (`<dataDir>/attachments`); without it the archive carries none. */
  attachmentsDir?: string;
  /** Where the companion's pictures are (`<dataDir>/companion`); without it the archive carries none. */
  avatarDir?: string;
}

export interface ExportResult {
  file: string;
  bytes: number;
  counts: Record<string, number>;
  vaultFiles: number;
  schemaVersion: number;
  ms: number;
  /** How long each part took. */
  phaseMs: Record<'data' | 'vault' | 'sql' | 'finishing', number>;
}

function last<T>(rows: T[]): T {
  const row = rows[rows.length - 1];
  if (row === undefined) throw new Error('archive: an empty page has no last row');
  return row;
}

export async function exportArchive(options: ExportOptions): Promise<ExportResult> {
  const { db, file, signal } = options;
  const now = options.now ?? (() => new Date());
  const pageSize = options.pageSize ?? 5000;
  const started = Date.now();
  const exportedAt = now();
  const checkCancelled = () => {
    if (signal?.aborted) throw new ApiError('cancelled', 'The export was stopped; no file was written.');
  };
  checkCancelled();

  const expected: Record<string, number> = {};
  for (const s of SECTIONS) expected[s.name] = await s.count(db);
  const rows = Object.values(expected).reduce((a, b) => a + b, 0);
  const vaultRows = ['memories', 'diary_blocks', 'conversations', 'messages'].reduce((n, k) => n + (expected[k] ?? 0), 1);
  const total = rows + vaultRows + (options.sql === false ? 0 : Math.max(1, Math.ceil(rows / 2)));
  let done = 0;
  let lastReport = 0;
  const progress = (phase: ExportPhase, force = false) => {
    const t = Date.now();
    if (!force && t - lastReport < 100) return;
    lastReport = t;
    options.onProgress?.({ phase, done: Math.min(done, total), total });
  };
  progress('data', true);
  const phaseMs = { data: 0, vault: 0, sql: 0, finishing: 0 };
  let mark = performance.now();
  const lap = (phase: keyof typeof phaseMs) => {
    const t = performance.now();
    phaseMs[phase] = Math.round(t - mark);
    mark = t;
  };

  const version = await schemaVersion(db);
  // The companion's name, as its identity block says it: in anima.json and on its messages in the vault.
  const companion = nameOf((await vaultSelf(db)).find((b) => b.key === 'identity')?.content ?? '');
  const zip = await ZipFileWriter.open(file);
  try {
    // --- anima.json -------------------------------------------------------------------------
    const counts: Record<string, number> = {};
    await zip.begin('anima.json', exportedAt);
    const head = {
      format: ARCHIVE_FORMAT,
      formatVersion: ARCHIVE_FORMAT_VERSION,
      appVersion: options.appVersion,
      schemaVersion: version,
      exportedAt: exportedAt.toISOString(),
      companion: { name: companion },
      secrets: 'none: API keys are never exported',
    };
    await zip.write(`${JSON.stringify(head).slice(0, -1)},\n"sections": {`);
    for (const [i, section] of SECTIONS.entries()) {
      await zip.write(`${i ? ',' : ''}\n${JSON.stringify(section.name)}: [`);
      let after: unknown[] | null = null;
      let n = 0;
      for (;;) {
        checkCancelled();
        const page = await section.page(db, after, pageSize);
        if (!page.length) break;
        await zip.write(`${n ? ',' : ''}\n${page.map((r) => r.json).join(',\n')}`);
        n += page.length;
        done += page.length;
        after = last(page).key;
        progress('data');
        if (page.length < pageSize) break;
      }
      counts[section.name] = n;
      await zip.write(n ? '\n]' : ']');
    }
    await zip.write(`\n},\n"counts": ${JSON.stringify(counts)}\n}\n`);
    await zip.end();

    // --- attachments/ -----------------------------------------------------------------------
    let attachments = 0;
    if (options.attachmentsDir) {
      for (const id of await attachmentIds(db)) {
        checkCancelled();
        if (!IMAGE_ID_PATTERN.test(id)) continue;
        const bytes = await fs.promises.readFile(path.join(options.attachmentsDir, id)).catch(() => null);
        if (!bytes) continue; // a reference whose file is gone: the row still says what it was
        await zip.add(`attachments/${id}`, bytes, exportedAt);
        attachments++;
      }
    }
    // --- companion/: the companion's pictures (settings.companion names the one it wears) ---------
    if (options.avatarDir) {
      const names = await fs.promises.readdir(options.avatarDir).catch(() => [] as string[]);
      for (const name of names.filter((n) => AVATAR_NAME_PATTERN.test(n)).sort()) {
        const bytes = await fs.promises.readFile(path.join(options.avatarDir, name)).catch(() => null);
        if (bytes) await zip.add(`companion/${name}`, bytes, exportedAt);
      }
    }
    lap('data');

    // --- vault/ -----------------------------------------------------------------------------
    let vaultFiles = 0;
    const addVault = async (name: string, text: string) => {
      await zip.add(name, text, exportedAt);
      vaultFiles++;
    };
    await addVault('vault/README.md', VAULT_README);
    await addVault('vault/self.md', selfFile(await vaultSelf(db)));
    done++;

    for (let after = 0; ;) {
      checkCancelled();
      const page = await vaultMemories(db, after, pageSize);
      for (const m of page) await addVault(memoryPath(m), memoryFile(m));
      done += page.length;
      progress('vault');
      if (page.length < pageSize) break;
      after = last(page).id;
    }

    // Diary days (everything but dreams, grouped by day), then one file per dream.
    let day: string | null = null;
    let blocks: VaultDiaryBlock[] = [];
    const flushDay = async () => {
      if (day !== null && blocks.length) await addVault(diaryDayPath(day), diaryDayFile(day, blocks));
      blocks = [];
    };
    for (let after: { day: string; id: number } | null = null; ;) {
      checkCancelled();
      const page = await vaultDiary(db, false, after, pageSize);
      for (const b of page) {
        if (b.day !== day) await flushDay();
        day = b.day;
        blocks.push(b);
      }
      done += page.length;
      progress('vault');
      if (page.length < pageSize) break;
      after = { day: last(page).day, id: last(page).id };
    }
    await flushDay();
    for (let after: { day: string; id: number } | null = null; ;) {
      checkCancelled();
      const page = await vaultDiary(db, true, after, pageSize);
      for (const b of page) await addVault(dreamPath(b), dreamFile(b));
      done += page.length;
      if (page.length < pageSize) break;
      after = { day: last(page).day, id: last(page).id };
    }

    for (let after: string | null = null; ;) {
      checkCancelled();
      const page = await vaultConversations(db, after, Math.min(pageSize, 500));
      for (const c of page) {
        await zip.begin(conversationPath(c), exportedAt);
        vaultFiles++;
        await zip.write(conversationHeader(c));
        for (let seq = 0; ;) {
          checkCancelled();
          const messages = await vaultMessages(db, c.id, seq, pageSize);
          if (messages.length) await zip.write(messages.map((m) => messageSection(m, companion)).join(''));
          done += messages.length;
          progress('vault');
          if (messages.length < pageSize) break;
          seq = last(messages).seq;
        }
        await zip.end();
        done++;
      }
      if (page.length < Math.min(pageSize, 500)) break;
      after = last(page).id;
    }

    lap('vault');

    // --- anima.sql --------------------------------------------------------------------------
    let sqlBytes = 0;
    if (options.sql !== false) {
      checkCancelled();
      progress('sql', true);
      const dump = await sqlDump(db, { alone: options.alone });
      checkCancelled();
      sqlBytes = Buffer.byteLength(dump);
      await zip.begin('anima.sql', exportedAt);
      // In slices, so the compressor's output reaches the disk as it goes.
      for (let i = 0; i < dump.length; i += 1 << 20) await zip.write(dump.slice(i, i + (1 << 20)));
      await zip.end();
      done = total - 1;
    }

    lap('sql');

    // --- manifest.json ----------------------------------------------------------------------
    progress('finishing', true);
    const manifest = {
      ...head,
      counts,
      attachments,
      vaultFiles,
      sql: options.sql === false ? null : { file: 'anima.sql', bytes: sqlBytes, leftOut: ['embeddings'] },
    };
    await zip.add('manifest.json', `${JSON.stringify(manifest, null, 2)}\n`, exportedAt);
    checkCancelled();
    const bytes = await zip.finish();
    done = total;
    progress('finishing', true);
    lap('finishing');
    return { file, bytes, counts, vaultFiles, schemaVersion: version, ms: Date.now() - started, phaseMs };
  } catch (err) {
    await zip.abort();
    if (err instanceof ArchiveTooLarge) throw new ApiError('invalid_input', `${err.message} Nothing was written.`);
    throw err;
  }
}
