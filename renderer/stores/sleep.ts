// The Sleep view's data: the cycle's status (running or not, next time, tonight's budget), the last
// runs with their steps, the morning digest with undo per item and the pin proposals, and the audit
// log of background model calls. Live progress arrives as sleep.progress events.
import { create } from 'zustand';
import type { AuditEntry, AuditEntryDetail, SleepDigest, SleepProgressEvent, SleepProposal, SleepRun, SleepStatus, SleepStepInfo } from '../../shared/api.js';
import { api } from '../api/index.js';
import { useApp } from './app.js';
import { idle, type Loadable } from './loadable.js';

export const RUNS_LIMIT = 10;
export const AUDIT_PAGE = 25;
export const AUDIT_FILTERS = ['all', 'ok', 'error', 'invalid'] as const;
export type AuditFilter = (typeof AUDIT_FILTERS)[number];

export interface SleepState {
  status: Loadable & { data: SleepStatus | null };
  /** The latest sleep.progress of the running cycle; null when none runs. */
  progress: SleepProgressEvent | null;
  starting: boolean;
  stopping: boolean;
  runs: Loadable & { items: SleepRun[] };
  digest: Loadable & { data: SleepDigest | null };
  /** Digest items being undone, by change id. */
  undoing: Record<number, boolean>;
  /** Proposals being resolved, by id. */
  resolving: Record<number, boolean>;
  audit: Loadable & { items: AuditEntry[]; total: number; filter: AuditFilter; offset: number };
  auditDetail: (Loadable & { id: number; data: AuditEntryDetail | null }) | null;

  refreshAll(): void;
  refreshStatus(): Promise<void>;
  refreshRuns(): Promise<void>;
  refreshDigest(): Promise<void>;
  refreshAudit(): Promise<void>;
  setAuditFilter(filter: AuditFilter): void;
  auditPage(offset: number): void;
  openAudit(id: number): Promise<void>;
  closeAudit(): void;
  /** Starts a cycle; returns the run id, or null when the host did not start one. */
  sleepNow(): Promise<number | null>;
  stop(): Promise<boolean>;
  undoChange(changeId: number): Promise<void>;
  resolveProposal(id: number, accept: boolean): Promise<SleepProposal>;

  noteProgress(event: SleepProgressEvent): void;
  noteFinished(event: { runId: number; status: SleepRun['status']; error: string | null }): void;
  /** A memory changed somewhere (an undo in another view, a cycle): the digest may show it. */
  noteMemoriesChanged(): void;
  refreshShown(): void;
}

let statusSeq = 0;
let runsSeq = 0;
let digestSeq = 0;
let auditSeq = 0;
let detailSeq = 0;
let statusTimer: ReturnType<typeof setTimeout> | undefined;
let stepTimer: ReturnType<typeof setTimeout> | undefined;
let digestTimer: ReturnType<typeof setTimeout> | undefined;

// ---- pure helpers (tested) ----

/** A run with one step's status moved on by a progress event (times filled in as they happen). */
export function applyProgress(run: SleepRun, event: SleepProgressEvent, nowIso: string): SleepRun {
  if (run.id !== event.runId) return run;
  let changed = false;
  const steps = run.steps.map((s): SleepStepInfo => {
    if (s.stepId !== event.stepId || s.status === event.status) return s;
    changed = true;
    const finished = event.status === 'done' || event.status === 'failed' || event.status === 'skipped';
    return {
      ...s,
      status: event.status,
      startedAt: s.startedAt ?? (event.status === 'running' ? nowIso : null),
      finishedAt: finished ? (s.finishedAt ?? nowIso) : s.finishedAt,
    };
  });
  return changed ? { ...run, steps } : run;
}

/** The digest with one change marked undone (until the host's own copy arrives). */
export function markUndone(digest: SleepDigest, changeId: number, undoneBy: number): SleepDigest {
  const mark = (items: SleepDigest['added']) =>
    items.some((c) => c.changeId === changeId) ? items.map((c) => (c.changeId === changeId ? { ...c, undoneBy: c.undoneBy ?? undoneBy } : c)) : items;
  return { ...digest, added: mark(digest.added), changed: mark(digest.changed), superseded: mark(digest.superseded) };
}

export function replaceProposal(digest: SleepDigest, proposal: SleepProposal): SleepDigest {
  return { ...digest, proposals: digest.proposals.map((p) => (p.id === proposal.id ? proposal : p)) };
}

export function auditInput(filter: AuditFilter, offset: number) {
  return { ...(filter === 'all' ? {} : { status: filter }), limit: AUDIT_PAGE, ...(offset ? { offset } : {}) };
}

// ---- the store ----

function initialData() {
  return {
    status: { ...idle(), data: null },
    progress: null,
    starting: false,
    stopping: false,
    runs: { ...idle(), items: [] },
    digest: { ...idle(), data: null },
    undoing: {},
    resolving: {},
    audit: { ...idle(), items: [], total: 0, filter: 'all' as AuditFilter, offset: 0 },
    auditDetail: null,
  } satisfies Partial<SleepState>;
}

export const useSleep = create<SleepState>()((set, get) => ({
  ...initialData(),

  refreshAll() {
    void get().refreshStatus();
    void get().refreshRuns();
    void get().refreshDigest();
    void get().refreshAudit();
  },

  async refreshStatus() {
    const seq = ++statusSeq;
    set({ status: { ...get().status, loading: true } });
    try {
      const data = await api().call('sleep.status', {});
      if (seq !== statusSeq) return;
      // The status is the truth about whether a cycle runs; a newer live event may be ahead of it.
      const live = get().progress;
      const progress = data.running ? (live && live.runId === data.running.runId && live.done > data.running.done ? live : data.running) : null;
      set({ status: { data, loaded: true, loading: false, error: null }, progress });
    } catch (error) {
      if (seq === statusSeq) set({ status: { ...get().status, loaded: true, loading: false, error } });
    }
  },

  async refreshRuns() {
    const seq = ++runsSeq;
    set({ runs: { ...get().runs, loading: true } });
    try {
      const items = await api().call('sleep.runs', { limit: RUNS_LIMIT });
      if (seq === runsSeq) set({ runs: { items, loaded: true, loading: false, error: null } });
    } catch (error) {
      if (seq === runsSeq) set({ runs: { ...get().runs, loaded: true, loading: false, error } });
    }
  },

  async refreshDigest() {
    const seq = ++digestSeq;
    set({ digest: { ...get().digest, loading: true } });
    try {
      const data = await api().call('sleep.digest', {});
      if (seq === digestSeq) set({ digest: { data, loaded: true, loading: false, error: null } });
    } catch (error) {
      if (seq === digestSeq) set({ digest: { ...get().digest, loaded: true, loading: false, error } });
    }
  },

  async refreshAudit() {
    const seq = ++auditSeq;
    const { filter, offset } = get().audit;
    set({ audit: { ...get().audit, loading: true } });
    try {
      const { items, total } = await api().call('sleep.audit', auditInput(filter, offset));
      if (seq !== auditSeq) return;
      // A page emptied by newer rows (or a smaller total) falls back to the first page.
      if (!items.length && offset > 0 && total > 0) {
        set({ audit: { ...get().audit, offset: 0 } });
        void get().refreshAudit();
        return;
      }
      set({ audit: { ...get().audit, items, total, loaded: true, loading: false, error: null } });
    } catch (error) {
      if (seq === auditSeq) set({ audit: { ...get().audit, loaded: true, loading: false, error } });
    }
  },

  setAuditFilter(filter) {
    if (filter === get().audit.filter) return;
    set({ audit: { ...get().audit, filter, offset: 0, items: [], total: 0, loaded: false } });
    void get().refreshAudit();
  },

  auditPage(offset) {
    set({ audit: { ...get().audit, offset: Math.max(0, offset) } });
    void get().refreshAudit();
  },

  async openAudit(id) {
    const seq = ++detailSeq;
    set({ auditDetail: { id, data: null, ...idle(), loading: true } });
    try {
      const data = await api().call('sleep.auditEntry', { id });
      if (seq === detailSeq) set({ auditDetail: { id, data, loaded: true, loading: false, error: null } });
    } catch (error) {
      if (seq === detailSeq) set({ auditDetail: { id, data: null, loaded: true, loading: false, error } });
    }
  },

  closeAudit() {
    detailSeq++;
    set({ auditDetail: null });
  },

  async sleepNow() {
    if (get().starting) return null;
    set({ starting: true });
    try {
      const { runId, sleepDay } = await api().call('sleep.now', {});
      if (runId !== null && (!get().progress || get().progress!.runId !== runId)) {
        set({ progress: { runId, sleepDay, stepId: '', status: 'pending', done: 0, total: get().progress?.total ?? 0 } });
      }
      void get().refreshStatus();
      void get().refreshRuns();
      return runId;
    } finally {
      set({ starting: false });
    }
  },

  async stop() {
    set({ stopping: true });
    try {
      const { stopped } = await api().call('sleep.stop', {});
      void get().refreshStatus();
      return stopped;
    } finally {
      set({ stopping: false });
    }
  },

  async undoChange(changeId) {
    if (get().undoing[changeId]) return;
    set({ undoing: { ...get().undoing, [changeId]: true } });
    try {
      await api().call('memories.undo', { changeId });
      const digest = get().digest.data;
      // The journal entry of the undo is not returned; -1 stands for "undone" until the refresh.
      if (digest) set({ digest: { ...get().digest, data: markUndone(digest, changeId, -1) } });
      void get().refreshDigest();
    } finally {
      const { [changeId]: _, ...rest } = get().undoing;
      set({ undoing: rest });
    }
  },

  async resolveProposal(id, accept) {
    set({ resolving: { ...get().resolving, [id]: true } });
    try {
      const proposal = await api().call('sleep.resolveProposal', { id, accept });
      const digest = get().digest.data;
      if (digest) set({ digest: { ...get().digest, data: replaceProposal(digest, proposal) } });
      return proposal;
    } finally {
      const { [id]: _, ...rest } = get().resolving;
      set({ resolving: rest });
    }
  },

  noteProgress(event) {
    set({ progress: event });
    const items = get().runs.items;
    if (items.some((r) => r.id === event.runId)) {
      const now = new Date().toISOString();
      set({ runs: { ...get().runs, items: items.map((r) => applyProgress(r, event, now)) } });
    } else if (useApp.getState().view === 'sleep') {
      // A run this window has not seen yet (started elsewhere, or just now): fetch it once.
      void get().refreshRuns();
    }
    if (event.status !== 'running' && event.status !== 'pending' && useApp.getState().view === 'sleep') {
      // A step finished: its counts, and the calls it made, are worth showing while the night goes on.
      clearTimeout(stepTimer);
      stepTimer = setTimeout(() => {
        void get().refreshRuns();
        if (get().audit.offset === 0) void get().refreshAudit();
      }, 400);
    }
    // The status (budget, "running") follows, once per burst.
    clearTimeout(statusTimer);
    statusTimer = setTimeout(() => void get().refreshStatus(), 300);
  },

  noteFinished() {
    set({ progress: null });
    clearTimeout(statusTimer);
    clearTimeout(stepTimer);
    // Everything a cycle touches, whether on screen or not: the next visit should not flash old data.
    get().refreshAll();
  },

  noteMemoriesChanged() {
    if (useApp.getState().view !== 'sleep' || !get().digest.loaded) return;
    clearTimeout(digestTimer);
    digestTimer = setTimeout(() => void get().refreshDigest(), 300);
  },

  refreshShown() {
    if (useApp.getState().view === 'sleep') get().refreshAll();
    else void get().refreshStatus();
  },
}));

/** Tests start from a clean slate. */
export function resetSleepStore(): void {
  clearTimeout(statusTimer);
  clearTimeout(stepTimer);
  clearTimeout(digestTimer);
  useSleep.setState(initialData());
}
