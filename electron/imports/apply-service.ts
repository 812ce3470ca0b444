// The import as the API offers it (Settings → Data → Import, `anima import`): uploads in chunks, a
// preview the person reads first, one import at a time with its progress as events, cancel, and a
// card's blocks written only on its own call.
//
// Why chunks: every transport carries a call of at most MAX_BODY_BYTES (the browser bridge refuses
// more before reading it, a gate worth keeping), and an export can be hundreds of megabytes. So the
// file goes up IMPORT_CHUNK_BYTES at a time, in order, into memory here (it is parsed in memory
// anyway); nothing is written to disk and nothing is stored until imports.apply. Uploads and previews
// nobody touched for 30 minutes are dropped.
import { randomUUID } from 'node:crypto';
import {
  ApiError,
  IMPORT_CHUNK_BYTES,
  MAX_IMPORT_BYTES,
  type AppliedCardResult,
  type ImportFormatName,
  type ImportPreview,
  type ImportProgress,
  type SelfBlockKey,
} from '../../shared/api.js';
import type { SelfLayer } from '../companion/self-layer.js';
import type { TranscriptImports } from '../conversations/import-transcript.js';
import type { Database } from '../db/open.js';
import type { HostEvents } from '../events/events.js';
import type { SettingsStore } from '../settings/settings.js';
import type { AttachmentStore } from '../attachments/store.js';
import { archiveSpan } from './anima-archive.js';
import { archiveCounts, restoreArchive, type ArchiveProgress } from './anima-archive-restore.js';
import { apply, applyCard, summarise, type ApplyDeps, type ApplyProgress } from './apply.js';
import { storedConversations } from './apply-summary.js';
import { parseImport } from './detect.js';
import { ImportError } from './errors.js';
import type { ImportFormat, ParseResult } from './types.js';

// The API's names for the formats are the parsers' (a compile error here when one side adds a format).
const _formats: [ImportFormat, ImportFormatName] extends [ImportFormatName, ImportFormat] ? true : never = true;
void _formats;

/** Uploads and previews unused for this long are dropped (the person walked away from the dialog). */
export const IMPORT_IDLE_MS = 30 * 60_000;
/** Progress events at most this often (plus every change of state). */
const PROGRESS_EVERY_MS = 250;
/** Previews kept at once: each holds a parsed export in memory. */
const MAX_PREVIEWS = 2;

interface Upload {
  name: string;
  size: number;
  chunks: Buffer[];
  received: number;
  touchedAt: number;
}

interface Preview {
  name: string;
  result: ParseResult;
  summary: ImportPreview;
  touchedAt: number;
}

interface Job {
  progress: ImportProgress;
  controller: AbortController;
  done: Promise<ImportProgress>;
}

export interface ImportServiceDeps extends Omit<ApplyDeps, 'onStored'> {
  selfLayer: SelfLayer;
  events: Pick<HostEvents, 'emit'>;
  now: () => Date;
  log: (level: 'info' | 'warn' | 'error', message: string) => void;
  /** Told of each stored conversation's messages (the graph and the embedder queue them). */
  onStored?: (messageIds: string[]) => void;
  /** What storing Anima's own archive needs (it writes every room's rows in one transaction); without it such an archive is refused. */
  archive?: {
    db: Database;
    settings: Pick<SettingsStore, 'restoreMissing'>;
    afterRestore?: () => void;
    /** Where an archive's attached images go (the data folder's attachments): each checked and stored by its content. */
    images?: Pick<AttachmentStore, 'put' | 'has'>;
    /** Stores one of the companion's pictures (checked by its bytes and name); whether it is here now. */
    restoreAvatar?: (name: string, bytes: Buffer) => Promise<boolean>;
  };
}

/** How an import ended (what apply returns, and an archive's restore). */
type Outcome = { status: 'done' | 'cancelled' | 'failed'; error: Error | null; failedAt: string | null; imported: number; already: number; notes?: string[] };

/** Where an archive's import stopped, for the message: the archive as a whole (it is stored in one piece). */
const archiveName = (result: ParseResult) => `the archive (${result.archive?.sections.conversations.length ?? 0} conversations)`;

/** An ImportError in the API's words: a file that cannot be imported is the person's input, said plainly. */
function asApiError(err: unknown): Error {
  if (err instanceof ImportError) return new ApiError(err.code === 'too_large' ? 'payload_too_large' : 'invalid_input', err.message, 'file');
  return err instanceof Error ? err : new Error(String(err));
}

const megabytes = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MB`;

export class ImportService {
  private readonly uploads = new Map<string, Upload>();
  private readonly previews = new Map<string, Preview>();
  private job: Job | null = null;
  private last: ImportProgress | null = null;
  private closed = false;

  constructor(private readonly deps: ImportServiceDeps) {}

  private get transcripts(): TranscriptImports {
    return this.deps.transcripts;
  }

  private sweep(): void {
    const stale = this.deps.now().getTime() - IMPORT_IDLE_MS;
    for (const [id, u] of this.uploads) if (u.touchedAt < stale) this.uploads.delete(id);
    for (const [id, p] of this.previews) if (p.touchedAt < stale && this.job?.progress.previewId !== id) this.previews.delete(id);
  }

  /** One chunk, in order. The first call (no uploadId, offset 0) opens the upload. */
  async upload(input: {
    uploadId?: string;
    name: string;
    size: number;
    offset: number;
    data: string;
  }): Promise<{ uploadId: string; received: number; complete: boolean }> {
    this.sweep();
    if (input.size > MAX_IMPORT_BYTES) {
      throw new ApiError(
        'payload_too_large',
        `${input.name} is ${megabytes(input.size)}; files up to ${megabytes(MAX_IMPORT_BYTES)} can be imported. Split the export or import the conversations file alone.`,
        'size',
      );
    }
    const bytes = Buffer.from(input.data, 'base64');
    if (bytes.length > IMPORT_CHUNK_BYTES) throw new ApiError('invalid_input', `A chunk holds at most ${IMPORT_CHUNK_BYTES} bytes.`, 'data');
    let id = input.uploadId;
    let upload = id ? this.uploads.get(id) : undefined;
    if (id && !upload)
      throw new ApiError('not_found', 'That upload is no longer here (it was finished, discarded or left unused too long). Choose the file again.', 'uploadId');
    if (!upload) {
      if (input.offset !== 0) throw new ApiError('invalid_input', 'An upload starts at offset 0.', 'offset');
      // One file in memory at a time (each may be up to MAX_IMPORT_BYTES): an older upload gives way.
      this.uploads.clear();
      id = randomUUID();
      upload = { name: input.name, size: input.size, chunks: [], received: 0, touchedAt: 0 };
      this.uploads.set(id, upload);
    }
    if (input.size !== upload.size || input.name !== upload.name)
      throw new ApiError('invalid_input', 'The chunk belongs to another file than this upload.', 'size');
    if (input.offset !== upload.received) throw new ApiError('conflict', `Expected the chunk at offset ${upload.received}, got ${input.offset}.`, 'offset');
    if (upload.received + bytes.length > upload.size) throw new ApiError('invalid_input', 'The chunks hold more bytes than the file’s size.', 'data');
    upload.chunks.push(bytes);
    upload.received += bytes.length;
    upload.touchedAt = this.deps.now().getTime();
    return { uploadId: id!, received: upload.received, complete: upload.received === upload.size };
  }

  /** Parses a complete upload into a preview (the upload is then let go). */
  async preview(input: { uploadId: string }): Promise<ImportPreview> {
    this.sweep();
    const upload = this.uploads.get(input.uploadId);
    if (!upload) throw new ApiError('not_found', 'That upload is no longer here. Choose the file again.', 'uploadId');
    if (upload.received !== upload.size)
      throw new ApiError('conflict', `The upload is not complete yet (${upload.received} of ${upload.size} bytes).`, 'uploadId');
    const bytes = Buffer.concat(upload.chunks, upload.size);
    this.uploads.delete(input.uploadId);
    return this.previewBytes(bytes, upload.name);
  }

  /** A preview of a file's bytes (the upload's, or a file the CLI read). */
  async previewBytes(bytes: Buffer, name: string): Promise<ImportPreview> {
    let result: ParseResult;
    try {
      result = parseImport(bytes, name, { now: this.deps.now() });
    } catch (err) {
      throw asApiError(err);
    }
    if (result.archive) return this.keepPreview(name, result, await this.archivePreview(name, result));
    const s = summarise(result);
    // What importing it again would do to each conversation here already: nothing (the same), add
    // new messages (grown), keep the file's last message as an earlier version, or keep ours (diverged).
    const compared = [...(await this.transcripts.compare(result.format, storedConversations(result))).values()];
    const grown = compared.filter((c) => c.kind === 'grown');
    const previewId = randomUUID();
    const summary: ImportPreview = {
      previewId,
      file: name.split(/[\\/]/).pop() || name,
      format: result.format,
      conversations: s.conversations,
      alreadyImported: compared.length,
      inTrash: compared.filter((c) => c.inTrash).length,
      grown: grown.length,
      newMessages: grown.reduce((n, c) => n + c.added, 0),
      newVersions: compared.filter((c) => c.kind === 'last').length,
      diverged: compared.filter((c) => c.kind === 'diverged').length,
      messages: s.messages,
      versions: s.versions,
      from: s.from,
      to: s.to,
      undated: s.undated,
      card: s.card ? { name: s.card.name, spec: s.card.spec, blocks: s.card.blocks, greeting: s.card.greeting ?? null } : null,
      warnings: s.warnings,
    };
    return this.keepPreview(name, result, summary);
  }

  private keepPreview(name: string, result: ParseResult, summary: ImportPreview): ImportPreview {
    // Each preview holds a parsed export: the oldest not being imported gives way.
    for (const id of [...this.previews.keys()]) {
      if (this.previews.size < MAX_PREVIEWS) break;
      if (this.job?.progress.previewId !== id) this.previews.delete(id);
    }
    this.previews.set(summary.previewId, { name, result, summary, touchedAt: this.deps.now().getTime() });
    return summary;
  }

  /** Anima's own archive: what it holds, part by part, and what of it is here already. */
  private async archivePreview(name: string, result: ParseResult): Promise<ImportPreview> {
    const archive = result.archive!;
    if (!this.deps.archive) throw new ApiError('invalid_input', 'This Anima cannot import its own archives here.', 'file');
    const parts = await archiveCounts(this.deps.archive.db, archive);
    const versions = archive.sections.messages.filter((m) => typeof m.replaced_by === 'string').length;
    const span = archiveSpan(archive);
    return {
      previewId: randomUUID(),
      file: name.split(/[\\/]/).pop() || name,
      format: 'anima',
      conversations: parts.conversations.total,
      alreadyImported: parts.conversations.already,
      inTrash: 0,
      messages: parts.messages.total - versions,
      versions,
      from: span.from,
      to: span.to,
      undated: 0,
      card: null,
      archive: { appVersion: archive.appVersion, schemaVersion: archive.schemaVersion, exportedAt: archive.exportedAt, parts },
      warnings: result.warnings,
    };
  }

  /** Starts storing a preview's conversations; returns at once with the first progress. */
  async apply(input: { previewId: string }): Promise<ImportProgress> {
    if (this.closed) throw new ApiError('conflict', 'Anima is closing.');
    if (this.job) throw new ApiError('conflict', 'An import is already running. Wait for it or cancel it first.');
    const preview = this.previews.get(input.previewId);
    if (!preview) throw new ApiError('not_found', 'That preview is no longer here. Choose the file again.', 'previewId');
    if (!preview.result.archive && storedConversations(preview.result).length === 0) {
      throw new ApiError(
        'invalid_input',
        preview.result.card ? 'This file is a character card: review its blocks and save them instead.' : 'There is no conversation to import in this file.',
        'previewId',
      );
    }
    const controller = new AbortController();
    const progress: ImportProgress = {
      jobId: randomUUID(),
      previewId: input.previewId,
      file: preview.summary.file,
      format: preview.result.format,
      state: 'running',
      total: preview.summary.conversations,
      done: 0,
      imported: 0,
      already: 0,
      inTrash: 0,
      messages: 0,
      versions: 0,
      error: null,
      failedAt: null,
      startedAt: this.deps.now().toISOString(),
      finishedAt: null,
    };
    let sentAt = 0;
    const emit = (force: boolean) => {
      const t = Date.now();
      if (!force && t - sentAt < PROGRESS_EVERY_MS) return;
      sentAt = t;
      this.deps.events.emit('imports.progress', { ...progress });
    };
    const onProgress = (p: ApplyProgress) => {
      Object.assign(progress, p);
      emit(p.done === p.total);
    };
    // The graph and the embedder hear of the stored messages once the import ends: their work (mention
    // detection, vectors) shares the database's one thread, and in the middle it would halve the import's pace.
    const storedIds: string[] = [];
    const run: Promise<Outcome> = preview.result.archive
      ? this.restore(preview.result, progress, emit, controller.signal, storedIds)
      : apply(
          preview.result,
          { transcripts: this.transcripts, markRead: this.deps.markRead, onStored: (ids) => ids.forEach((id) => storedIds.push(id)) },
          { onProgress, signal: controller.signal },
        );
    const done = run
      .then((r) => {
        progress.state = r.status;
        if (r.notes?.length) progress.notes = r.notes;
        if (r.error) {
          const e = asApiError(r.error);
          progress.error = e instanceof ApiError ? e.toJSON() : { code: 'internal', message: e.message };
          progress.failedAt = r.failedAt;
          this.deps.log('error', `import of ${preview.summary.file} stopped at “${r.failedAt}”: ${e.message}`);
        }
        this.deps.log('info', `import of ${preview.summary.file}: ${r.status}, ${r.imported} conversations stored, ${r.already} already here`);
        // The preview is spent when everything in it is here; after a cancel or a failure it stays, so "go on" needs no new upload.
        if (r.status === 'done') this.previews.delete(input.previewId);
        else preview.touchedAt = this.deps.now().getTime();
        return progress;
      })
      .catch((err: unknown) => {
        progress.state = 'failed';
        progress.error = { code: 'internal', message: (err as Error).message };
        return progress;
      })
      .finally(async () => {
        // A big import wrote as much WAL again as it stored: let it go before the import is done.
        if (storedIds.length) await this.transcripts.settle().catch((err: Error) => this.deps.log('warn', `after an import: ${err.message}`));
        this.stored(storedIds);
        progress.finishedAt = this.deps.now().toISOString();
        this.last = { ...progress };
        this.job = null;
        emit(true);
      });
    this.job = { progress, controller, done };
    emit(true);
    return { ...progress };
  }

  /**
   * The archive's images, after its rows: each stored by its content, which must give the id it came
   * under (a file that does not is left out, and its message shows the picture as missing); one here
   * already is kept. A picture that cannot be stored costs the import nothing else.
   */
  private async restoreImages(images: Map<string, Uint8Array> | undefined): Promise<void> {
    const store = this.deps.archive?.images;
    if (!store || !images?.size) return;
    let stored = 0;
    for (const [id, bytes] of images) {
      if (store.has(id)) continue;
      try {
        const image = await store.put(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
        if (image.id === id) stored++;
        else this.deps.log('warn', `archive import: the image ${id} does not match its content; kept as ${image.id}, unreferenced`);
      } catch (err) {
        this.deps.log('warn', `archive import: the image ${id} was not stored: ${(err as Error).message}`);
      }
    }
    this.deps.log('info', `archive import: ${stored} of ${images.size} images stored`);
  }

  /** The companion's pictures, after the rows (the restored settings name the one it wears); one that fails its checks is left out. */
  private async restoreAvatars(avatars: Map<string, Uint8Array> | undefined): Promise<void> {
    const restore = this.deps.archive?.restoreAvatar;
    if (!restore || !avatars?.size) return;
    for (const [name, bytes] of avatars) {
      const ok = await restore(name, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)).catch(() => false);
      if (!ok) this.deps.log('warn', `archive import: the companion's picture ${name} was not stored (not the picture its name says)`);
    }
  }

  /** Anima's own archive, in one transaction: done with everything, or cancelled / failed with nothing stored. */
  private async restore(
    result: ParseResult,
    progress: ImportProgress,
    emit: (force: boolean) => void,
    signal: AbortSignal,
    storedIds: string[],
  ): Promise<Outcome> {
    const deps = this.deps.archive;
    const nothing = { imported: 0, already: 0, failedAt: null };
    if (!deps) return { ...nothing, status: 'failed', error: new ApiError('invalid_input', 'This Anima cannot import its own archives here.') };
    const onProgress = (p: ArchiveProgress) => {
      Object.assign(progress, p);
      emit(p.done === p.total);
    };
    try {
      const r = await restoreArchive(result.archive!, { ...deps, markRead: this.deps.markRead }, { onProgress, signal });
      storedIds.push(...r.messageIds);
      await this.restoreImages(result.archive!.images);
      await this.restoreAvatars(result.archive!.avatars);
      this.afterRestore();
      this.deps.log('info', `archive import: ${JSON.stringify(r.counts)}`);
      return { status: 'done', error: null, failedAt: null, imported: r.imported, already: r.already };
    } catch (err) {
      // The transaction went back: nothing of the archive is here.
      Object.assign(progress, { done: 0, imported: 0, already: 0, inTrash: 0, messages: 0, versions: 0 });
      if (err instanceof ApiError && err.code === 'cancelled') return { ...nothing, status: 'cancelled', error: null };
      return { ...nothing, status: 'failed', error: err instanceof Error ? err : new Error(String(err)), failedAt: archiveName(result) };
    }
  }

  private afterRestore(): void {
    try {
      this.deps.archive?.afterRestore?.();
    } catch (err) {
      this.deps.log('warn', `after an archive import: ${(err as Error).message}`);
    }
  }

  private stored(ids: string[]): void {
    try {
      this.deps.onStored?.(ids);
    } catch (err) {
      this.deps.log('warn', `an import listener failed: ${(err as Error).message}`);
    }
  }

  /** Stops the running import after the conversation in hand. */
  async cancel(): Promise<{ cancelled: boolean }> {
    if (!this.job) return { cancelled: false };
    this.job.controller.abort();
    return { cancelled: true };
  }

  async status(): Promise<ImportProgress | null> {
    return this.job ? { ...this.job.progress } : this.last;
  }

  /** The running import's end (tests and the CLI wait on it); null when none runs. */
  running(): Promise<ImportProgress> | null {
    return this.job?.done ?? null;
  }

  async discard(input: { id: string }): Promise<{ discarded: boolean }> {
    if (this.job?.progress.previewId === input.id) return { discarded: false };
    return { discarded: this.uploads.delete(input.id) || this.previews.delete(input.id) };
  }

  async applyCard(input: { blocks: Partial<Record<SelfBlockKey, string>> }): Promise<AppliedCardResult> {
    return applyCard(this.deps.selfLayer, input.blocks);
  }

  /** When the host closes: the running import stops after the conversation in hand, and is awaited. */
  async close(): Promise<void> {
    this.closed = true;
    this.job?.controller.abort();
    await this.job?.done;
    this.uploads.clear();
    this.previews.clear();
  }
}
