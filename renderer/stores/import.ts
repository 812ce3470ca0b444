// Settings → Data → Import: a file from another app goes up in chunks, the host says what it holds,
// the person confirms, and the import runs in the background with its progress (imports.progress
// events) and a cancel. A character card is shown as the companion's blocks for review and saved
// only by the person, with an undo. The store outlives the panel: an import goes on while the person
// is elsewhere in the app, and the panel shows where it stands when they come back.
import { create } from 'zustand';
import { IMPORT_CHUNK_BYTES, MAX_IMPORT_BYTES, type AppliedCardResult, type ImportPreview, type ImportProgress, type SelfBlockKey } from '../../shared/api.js';
import { api } from '../api/index.js';
import { reportError } from './app.js';
import { useConversations } from './conversations.js';
import { useSelf } from './self.js';

export type ImportStep =
  /** Nothing chosen yet (or the last one finished and was put away). */
  | { kind: 'idle' }
  /** Sending the file to the host: bytes sent of the file's size. */
  | { kind: 'uploading'; file: string; sent: number; size: number }
  /** The host is reading the file. */
  | { kind: 'reading'; file: string }
  /** What the file holds, before anything is stored. */
  | { kind: 'preview'; preview: ImportPreview }
  /** The import runs (or ended): its progress. */
  | { kind: 'importing'; progress: ImportProgress }
  /** A card's blocks were saved: what they held before, for undo. */
  | { kind: 'cardSaved'; name: string; applied: AppliedCardResult; undone: boolean }
  /** The file could not be read or sent. */
  | { kind: 'failed'; file: string; error: unknown };

export interface ImportState {
  step: ImportStep;
  /** A call in flight (apply, cancel, save card, undo): buttons wait for it. */
  busy: boolean;

  /** Reads the running or last import once (the panel opens while one runs). */
  resume(): Promise<void>;
  choose(file: File): Promise<void>;
  apply(): Promise<void>;
  cancel(): Promise<void>;
  saveCard(blocks: Partial<Record<SelfBlockKey, string>>): Promise<void>;
  undoCard(): Promise<void>;
  /** Back to the start (the preview, if any, is let go on the host). */
  reset(): void;
  noteProgress(progress: ImportProgress): void;
}

// ---- pure helpers (tested) ----

/** Bytes as base64, a slice at a time (String.fromCharCode takes only so many arguments). */
export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** Whole percent, 0–100. */
export function percentOf(done: number, total: number): number {
  if (total <= 0) return 0;
  return Math.max(0, Math.min(100, Math.floor((done / total) * 100)));
}

/** A preview's first and last month as the person's locale writes them ("Apr 2023", "2023年4月"), or null. */
export function monthSpan(preview: Pick<ImportPreview, 'from' | 'to'>, locale: string): { from: string; to: string; same: boolean } | null {
  if (!preview.from || !preview.to) return null;
  const fmt = new Intl.DateTimeFormat(locale, { year: 'numeric', month: 'short', timeZone: 'UTC' });
  const from = fmt.format(new Date(preview.from));
  const to = fmt.format(new Date(preview.to));
  return { from, to, same: from === to };
}

/**
 * What a preview of another app's export would do to the conversations here already: those the file
 * carries further get new messages (`grown`) or another version of their last answer (`newVersions`);
 * the rest are skipped. Nothing new when every conversation is skipped.
 */
export function previewReach(preview: Pick<ImportPreview, 'conversations' | 'alreadyImported' | 'grown' | 'newVersions'>): {
  grown: number;
  newVersions: number;
  skipped: number;
  nothingNew: boolean;
} {
  const grown = preview.grown ?? 0;
  const newVersions = preview.newVersions ?? 0;
  const skipped = Math.max(0, preview.alreadyImported - grown - newVersions);
  return { grown, newVersions, skipped, nothingNew: skipped >= preview.conversations };
}

// ---- the store ----

let subscribed = false;

function subscribe(): void {
  if (subscribed) return;
  subscribed = true;
  api().on('imports.progress', (progress) => useImport.getState().noteProgress(progress));
}

export const useImport = create<ImportState>()((set, get) => ({
  step: { kind: 'idle' },
  busy: false,

  async resume() {
    subscribe();
    if (get().step.kind !== 'idle') return;
    const progress = await api()
      .call('imports.status', {})
      .catch(() => null);
    if (progress?.state === 'running' && get().step.kind === 'idle') set({ step: { kind: 'importing', progress } });
  },

  async choose(file) {
    subscribe();
    const name = file.name || 'import';
    if (file.size > MAX_IMPORT_BYTES) {
      set({ step: { kind: 'failed', file: name, error: { code: 'payload_too_large', message: `${name}: ${file.size} bytes` } } });
      return;
    }
    if (file.size === 0) {
      set({ step: { kind: 'failed', file: name, error: { code: 'invalid_input', message: `${name}: the file is empty.` } } });
      return;
    }
    set({ step: { kind: 'uploading', file: name, sent: 0, size: file.size } });
    try {
      let uploadId: string | undefined;
      for (let offset = 0; offset < file.size; offset += IMPORT_CHUNK_BYTES) {
        const bytes = new Uint8Array(await file.slice(offset, offset + IMPORT_CHUNK_BYTES).arrayBuffer());
        const r = await api().call('imports.upload', { uploadId, name, size: file.size, offset, data: toBase64(bytes) });
        uploadId = r.uploadId;
        // The person may have put it away meanwhile.
        if (get().step.kind !== 'uploading') {
          void api()
            .call('imports.discard', { id: uploadId })
            .catch(() => {});
          return;
        }
        set({ step: { kind: 'uploading', file: name, sent: r.received, size: file.size } });
      }
      set({ step: { kind: 'reading', file: name } });
      const preview = await api().call('imports.preview', { uploadId: uploadId! });
      if (get().step.kind === 'reading') set({ step: { kind: 'preview', preview } });
      else
        void api()
          .call('imports.discard', { id: preview.previewId })
          .catch(() => {});
    } catch (error) {
      set({ step: { kind: 'failed', file: name, error } });
    }
  },

  async apply() {
    const step = get().step;
    if (step.kind !== 'preview' || get().busy) return;
    set({ busy: true });
    try {
      const progress = await api().call('imports.apply', { previewId: step.preview.previewId });
      // An import that ended before this answer came is already shown by its last event.
      const now = get().step;
      if (now.kind === 'preview' || (now.kind === 'importing' && now.progress.jobId === progress.jobId && now.progress.state === 'running')) {
        set({ step: { kind: 'importing', progress: now.kind === 'importing' ? now.progress : progress } });
      }
    } catch (error) {
      set({ step: { kind: 'failed', file: step.preview.file, error } });
    } finally {
      set({ busy: false });
    }
  },

  async cancel() {
    const step = get().step;
    if (step.kind === 'uploading' || step.kind === 'reading') {
      set({ step: { kind: 'idle' } });
      return;
    }
    if (step.kind !== 'importing' || step.progress.state !== 'running') return;
    set({ busy: true });
    try {
      await api().call('imports.cancel', {});
    } finally {
      set({ busy: false });
    }
  },

  async saveCard(blocks) {
    const step = get().step;
    if (step.kind !== 'preview' || !step.preview.card || get().busy) return;
    set({ busy: true });
    try {
      const applied = await api().call('imports.applyCard', { blocks });
      void api()
        .call('imports.discard', { id: step.preview.previewId })
        .catch(() => {});
      set({ step: { kind: 'cardSaved', name: step.preview.card.name, applied, undone: false } });
      void useSelf.getState().load();
    } finally {
      set({ busy: false });
    }
  },

  async undoCard() {
    const step = get().step;
    if (step.kind !== 'cardSaved' || step.undone || get().busy) return;
    set({ busy: true });
    try {
      const self = useSelf.getState();
      for (const p of step.applied.previous) {
        if (p.isDefault) await self.reset(p.key);
        else await self.update(p.key, p.content);
      }
      set({ step: { ...step, undone: true } });
    } catch (err) {
      reportError(err);
    } finally {
      set({ busy: false });
    }
  },

  reset() {
    const step = get().step;
    if (step.kind === 'importing' && step.progress.state === 'running') return;
    if (step.kind === 'preview')
      void api()
        .call('imports.discard', { id: step.preview.previewId })
        .catch(() => {});
    set({ step: { kind: 'idle' } });
  },

  noteProgress(progress) {
    const step = get().step;
    // Progress of an import this window started, or one running when it opened (another window, the CLI is refused by the lock).
    if (step.kind === 'importing' && step.progress.jobId !== progress.jobId && step.progress.state === 'running') return;
    if (step.kind === 'preview' && step.preview.previewId !== progress.previewId) return;
    if (step.kind === 'uploading' || step.kind === 'reading' || step.kind === 'cardSaved' || step.kind === 'failed') return;
    set({ step: { kind: 'importing', progress } });
    // The chat list shows the new conversations once the import ends.
    if (progress.state !== 'running' && progress.imported > 0) useConversations.getState().noteChanged();
  },
}));
