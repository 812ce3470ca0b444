// Settings → Data → Export: one export at a time runs in the host (archive.export) and reports its
// progress as archive.progress events; the store outlives the panel, so coming back shows where it stands.
import { create } from 'zustand';
import type { ArchiveExportStatus } from '../../shared/api.js';
import { api } from '../api/index.js';

export interface ExportState {
  status: ArchiveExportStatus | null;
  /** A start or cancel call in flight. */
  busy: boolean;
  /** A start that failed before the export began (another one running, the host gone). */
  error: unknown;
  resume(): Promise<void>;
  start(): Promise<void>;
  cancel(): Promise<void>;
  noteProgress(status: ArchiveExportStatus): void;
}

let subscribed = false;

function subscribe(): void {
  if (subscribed) return;
  subscribed = true;
  api().on('archive.progress', (status) => useExport.getState().noteProgress(status));
}

export const useExport = create<ExportState>()((set, get) => ({
  status: null,
  busy: false,
  error: null,

  async resume() {
    subscribe();
    if (get().status) return;
    const status = await api()
      .call('archive.exportStatus', {})
      .catch(() => null);
    if (status && !get().status) set({ status });
  },

  async start() {
    subscribe();
    if (get().busy || get().status?.state === 'running') return;
    set({ busy: true, error: null });
    try {
      const status = await api().call('archive.export', {});
      // An event of this export may have arrived before the answer: keep the newer.
      const now = get().status;
      if (!now || now.id !== status.id) set({ status });
    } catch (error) {
      set({ error });
    } finally {
      set({ busy: false });
    }
  },

  async cancel() {
    if (get().status?.state !== 'running') return;
    set({ busy: true });
    try {
      await api().call('archive.cancel', {});
    } catch (error) {
      set({ error });
    } finally {
      set({ busy: false });
    }
  },

  noteProgress(status) {
    const now = get().status;
    // A late event of a running export never undoes its end.
    if (now && now.id === status.id && now.state !== 'running') return;
    set({ status });
  },
}));
