// Settings → Models → On this computer: the on-device model catalogue with what this computer has of
// each model, downloads with live progress (models.progress events), cancel, resume, delete, and the
// embedding model memory search uses. The store subscribes to the host's model events itself, once,
// the first time it is used: downloads go on while the person is elsewhere in the app.
import { create } from 'zustand';
import type { ApiEvents, EmbeddingsStatus, LocalModel, ModelDownloadProgress } from '../../shared/api.js';
import type { ServerEmbeddingChoice } from '../../shared/api/settings.js';
import { api } from '../api/index.js';
import { useApp } from './app.js';

export type ModelAction = 'download' | 'cancel' | 'delete' | 'use';

export interface ModelsState {
  items: LocalModel[];
  loaded: boolean;
  /** The list could not be read. */
  error: unknown;
  /** Calls in flight, by model id. */
  pending: Record<string, ModelAction>;
  /** The last models.changed said this model finished (installed, failed, stopped): for a live announcement. */
  lastChange: { id: string; state: LocalModel['state']; failed: boolean; seq: number } | null;
  /** Where search by meaning stands (the embeddings.status event); null until first read. */
  embeddings: EmbeddingsStatus | null;

  refresh(): Promise<void>;
  download(id: string): Promise<LocalModel>;
  cancel(id: string): Promise<LocalModel>;
  remove(id: string): Promise<LocalModel>;
  /** null: memory search goes back to words only. */
  useForEmbeddings(id: string | null): Promise<void>;
  /** Memory search through a connection's embedding model (the host asks the server first; rejects with its words). */
  useServerForEmbeddings(choice: ServerEmbeddingChoice): Promise<void>;

  noteProgress(progress: ModelDownloadProgress): void;
  noteChanged(payload: ApiEvents['models.changed']): void;
}

// ---- pure helpers (tested) ----

/** The list with one model's live progress applied; events for a model not downloading are ignored. */
export function applyProgress(items: LocalModel[], progress: ModelDownloadProgress, starting = false): LocalModel[] {
  let changed = false;
  const next = items.map((m) => {
    if (m.id !== progress.id) return m;
    if (m.state !== 'downloading' && !starting) return m;
    changed = true;
    return { ...m, state: 'downloading' as const, progress, error: null };
  });
  return changed ? next : items;
}

/** Whole percent done, 0–100 (never 100 until the last byte is there). */
export function percentDone(progress: Pick<ModelDownloadProgress, 'bytesDone' | 'bytesTotal'> | null): number {
  if (!progress || progress.bytesTotal <= 0) return 0;
  const exact = (progress.bytesDone / progress.bytesTotal) * 100;
  return Math.max(0, Math.min(100, progress.bytesDone >= progress.bytesTotal ? 100 : Math.floor(exact)));
}

/** Sizes in decimal units, as operating systems and the hub show them: 950 kB, 2.4 MB, 136 MB, 1.6 GB. */
export function formatBytes(bytes: number, locale: string): string {
  const n = Math.max(0, bytes);
  const fmt = (value: number, digits: number) => new Intl.NumberFormat(locale, { maximumFractionDigits: digits, minimumFractionDigits: digits }).format(value);
  if (n >= 1e9) return `${fmt(n / 1e9, 1)} GB`;
  if (n >= 1e7) return `${fmt(n / 1e6, 0)} MB`;
  if (n >= 1e6) return `${fmt(n / 1e6, 1)} MB`;
  if (n >= 1e3) return `${fmt(n / 1e3, 0)} kB`;
  return `${fmt(n, 0)} B`;
}

/** Time left as a translation key and count: seconds up to a minute (in fives past ten), then minutes, then hours. */
export function timeLeft(seconds: number | null): { key: 'estimating' | 'secondsLeft' | 'minutesLeft' | 'hoursLeft'; count: number } {
  if (seconds === null || !Number.isFinite(seconds) || seconds < 0) return { key: 'estimating', count: 0 };
  if (seconds < 10) return { key: 'secondsLeft', count: Math.max(1, Math.ceil(seconds)) };
  if (seconds < 60) return { key: 'secondsLeft', count: Math.min(60, Math.ceil(seconds / 5) * 5) };
  if (seconds < 3600) return { key: 'minutesLeft', count: Math.max(1, Math.round(seconds / 60)) };
  return { key: 'hoursLeft', count: Math.round(seconds / 3600) };
}

/** Language names in the person's language, the first `max` of them and how many more there are. */
export function languageNames(tags: readonly string[], locale: string, max = 3): { list: string; more: number } {
  let names: Intl.DisplayNames | undefined;
  try {
    names = new Intl.DisplayNames([locale], { type: 'language' });
  } catch {
    names = undefined;
  }
  const shown = tags.slice(0, max).map((tag) => names?.of(tag) ?? tag);
  // Intl.ListFormat's unit lists run Chinese names together with no separator at all.
  const list = shown.join(locale.startsWith('zh') ? '、' : ', ');
  return { list, more: Math.max(0, tags.length - max) };
}

/** The embedding model memory search uses, if it is installed; else the first installed one; else null. */
export function searchModel(items: LocalModel[]): { model: LocalModel; chosen: boolean } | null {
  const chosen = items.find((m) => m.usedBy.embeddings && m.state === 'installed');
  if (chosen) return { model: chosen, chosen: true };
  const ready = items.find((m) => m.task === 'embedding' && m.state === 'installed');
  return ready ? { model: ready, chosen: false } : null;
}

// ---- the store ----

let subscribed: (() => void)[] = [];
let changeSeq = 0;
/**
 * models.changed events seen. A call's answer and the events travel separately (HTTP and the event
 * stream), so a download that finishes in a blink can report "installed" before the call answers
 * "downloading". The host follows every change with models.changed, so an answer that arrives after
 * one is older news and is dropped.
 */
let eventsSeen = 0;

/** Host events to this store; once per client, for the life of the page. */
function subscribe(): void {
  if (subscribed.length) return;
  const client = api();
  subscribed = [
    client.on('models.progress', (progress) => useModels.getState().noteProgress(progress)),
    client.on('models.changed', (payload) => useModels.getState().noteChanged(payload)),
    client.on('embeddings.status', (embeddings) => useModels.setState({ embeddings })),
    // Events sent while the stream was down are lost: read the list again.
    client.onConnect((reconnected) => {
      if (reconnected && useModels.getState().loaded)
        void useModels
          .getState()
          .refresh()
          .catch(() => {});
    }),
  ];
}

function initialData() {
  return {
    items: [] as LocalModel[],
    loaded: false,
    error: null as unknown,
    pending: {} as Record<string, ModelAction>,
    lastChange: null,
    embeddings: null as EmbeddingsStatus | null,
  };
}

export const useModels = create<ModelsState>()((set, get) => {
  const replace = (model: LocalModel) => set({ items: get().items.map((m) => (m.id === model.id ? model : m)) });
  /** Applies a call's answer unless a models.changed event arrived while it was on its way. */
  const answer = async (call: () => Promise<LocalModel>, apply: (model: LocalModel) => void = replace): Promise<LocalModel> => {
    const seen = eventsSeen;
    const model = await call();
    if (seen === eventsSeen) apply(model);
    return model;
  };
  const withPending = async <T>(id: string, action: ModelAction, run: () => Promise<T>): Promise<T> => {
    set({ pending: { ...get().pending, [id]: action } });
    try {
      return await run();
    } finally {
      const { [id]: _, ...rest } = get().pending;
      set({ pending: rest });
    }
  };

  return {
    ...initialData(),

    async refresh() {
      subscribe();
      const seen = eventsSeen;
      try {
        // The search status is a line of its own: the list shows without it.
        const status = api()
          .call('models.embeddingStatus', {})
          .then((embeddings) => set({ embeddings }))
          .catch(() => {});
        const items = await api().call('models.list', {});
        if (seen === eventsSeen) set({ items, loaded: true, error: null });
        await status;
      } catch (error) {
        set({ loaded: true, error });
        throw error;
      }
    },

    download(id) {
      return withPending(id, 'download', () =>
        answer(
          () => api().call('models.download', { id }),
          (model) => {
            // Progress events may have arrived before the answer: keep the newest numbers.
            const current = get().items.find((m) => m.id === id);
            replace(model.state === 'downloading' && current?.state === 'downloading' && current.progress ? { ...model, progress: current.progress } : model);
          },
        ),
      );
    },

    cancel(id) {
      return withPending(id, 'cancel', () => answer(() => api().call('models.cancel', { id })));
    },

    remove(id) {
      return withPending(id, 'delete', () => answer(() => api().call('models.delete', { id })));
    },

    async useForEmbeddings(id) {
      const key = id ?? get().items.find((m) => m.usedBy.embeddings)?.id ?? '';
      await withPending(key, 'use', async () => {
        const settings = await api().call('models.useForEmbeddings', { id });
        useApp.getState().applySettings(settings);
        set({ items: get().items.map((m) => ({ ...m, usedBy: { ...m.usedBy, embeddings: m.id === id } })) });
      });
    },

    async useServerForEmbeddings(choice) {
      const settings = await api().call('models.useServerForEmbeddings', choice);
      useApp.getState().applySettings(settings);
      set({ items: get().items.map((m) => ({ ...m, usedBy: { ...m.usedBy, embeddings: false } })) });
    },

    noteProgress(progress) {
      const items = applyProgress(get().items, progress, get().pending[progress.id] === 'download');
      if (items !== get().items) set({ items });
    },

    noteChanged({ id, models }) {
      eventsSeen++;
      const before = id ? get().items.find((m) => m.id === id) : undefined;
      const after = id ? models.find((m) => m.id === id) : undefined;
      const finished = before?.state === 'downloading' && after && after.state !== 'downloading';
      set({
        items: models,
        loaded: true,
        error: null,
        lastChange: finished ? { id: after.id, state: after.state, failed: after.error !== null, seq: ++changeSeq } : get().lastChange,
      });
    },
  };
});

/** Tests start from a clean slate. */
export function resetModelsStore(): void {
  for (const off of subscribed) off();
  subscribed = [];
  useModels.setState(initialData());
}
