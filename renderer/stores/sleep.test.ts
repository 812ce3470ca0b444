import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApiOutputs, SleepDigest, SleepRun, SleepStatus } from '../../shared/api.js';
import { setClient } from '../api/index.js';
import { scriptedClient, type ScriptedClient } from '../api/scripted-client.js';
import { useApp } from './app.js';
import { applyProgress, auditInput, AUDIT_PAGE, markUndone, replaceProposal, resetSleepStore, useSleep } from './sleep.js';

function run(over: Partial<SleepRun> = {}): SleepRun {
  return {
    id: 4,
    sleepDay: '2025-03-10',
    trigger: 'manual',
    status: 'running',
    startedAt: '2025-03-11T02:00:00.000Z',
    finishedAt: null,
    error: null,
    steps: [
      {
        stepId: 'light-sleep',
        dependsOn: [],
        status: 'running',
        reason: null,
        waitedFor: null,
        startedAt: '2025-03-11T02:00:01.000Z',
        finishedAt: null,
        stats: null,
        error: null,
      },
      {
        stepId: 'dream',
        dependsOn: ['light-sleep'],
        status: 'pending',
        reason: null,
        waitedFor: null,
        startedAt: null,
        finishedAt: null,
        stats: null,
        error: null,
      },
    ],
    ...over,
  };
}

function digest(): SleepDigest {
  const change = (changeId: number, text: string) => ({
    changeId,
    memoryId: changeId * 10,
    action: 'create' as const,
    actor: 'light-sleep' as const,
    text,
    reason: null,
    undoneBy: null,
  });
  return {
    day: '2025-03-10',
    runId: 4,
    createdAt: '2025-03-11T02:10:00.000Z',
    summary: 'While I slept I remembered two things.',
    added: [change(1, 'Sam has a cat'), change(2, 'Sam likes tea')],
    changed: [],
    superseded: [change(3, 'Sam lives in Porto')],
    proposals: [{ id: 7, memoryId: 10, action: 'pin', text: 'Sam has a cat', reason: 'often mentioned', status: 'open' }],
    diary: { anchors: 1, imprints: 2, narratives: 1, dreams: 1 },
  };
}

function status(over: Partial<SleepStatus> = {}): SleepStatus {
  return {
    running: null,
    lastRun: null,
    nextAt: '2025-03-12T02:00:00.000Z',
    sleepDay: '2025-03-11',
    budget: { calls: 3, tokens: 1200, maxCalls: 40, maxTokens: 200_000 },
    blocked: null,
    blockedCode: null,
    ...over,
  };
}

let handlers: ScriptedClient['handlers'];
let calls: ScriptedClient['calls'];

beforeEach(() => {
  useApp.setState({ view: 'sleep' });
  const scripted = scriptedClient();
  ({ handlers, calls } = scripted);
  resetSleepStore();
  setClient(scripted.client);
});
afterEach(() => {
  resetSleepStore();
  setClient(null);
});

describe('pure helpers', () => {
  it('moves a step on with a progress event, filling in its times', () => {
    const r = run();
    const done = applyProgress(r, { runId: 4, sleepDay: r.sleepDay, stepId: 'light-sleep', status: 'done', done: 1, total: 2 }, '2025-03-11T02:05:00.000Z');
    expect(done.steps[0]).toMatchObject({ status: 'done', startedAt: '2025-03-11T02:00:01.000Z', finishedAt: '2025-03-11T02:05:00.000Z' });
    const started = applyProgress(done, { runId: 4, sleepDay: r.sleepDay, stepId: 'dream', status: 'running', done: 1, total: 2 }, '2025-03-11T02:05:01.000Z');
    expect(started.steps[1]).toMatchObject({ status: 'running', startedAt: '2025-03-11T02:05:01.000Z', finishedAt: null });
    expect(applyProgress(r, { runId: 5, sleepDay: r.sleepDay, stepId: 'dream', status: 'running', done: 0, total: 2 }, 'x')).toBe(r);
  });

  it('marks one digest change undone wherever it is listed', () => {
    const d = markUndone(digest(), 3, -1);
    expect(d.superseded[0]!.undoneBy).toBe(-1);
    expect(d.added.every((c) => c.undoneBy === null)).toBe(true);
  });

  it('replaces a resolved proposal', () => {
    const d = replaceProposal(digest(), { ...digest().proposals[0]!, status: 'accepted' });
    expect(d.proposals[0]!.status).toBe('accepted');
  });

  it('asks the audit log for a status only when filtered, and for a page', () => {
    expect(auditInput('all', 0)).toEqual({ limit: AUDIT_PAGE });
    expect(auditInput('error', 50)).toEqual({ status: 'error', limit: AUDIT_PAGE, offset: 50 });
  });
});

describe('the sleep store', () => {
  it('starts a cycle and shows it as running at once', async () => {
    handlers['sleep.now'] = () => ({ runId: 4, sleepDay: '2025-03-10' });
    handlers['sleep.status'] = () => status({ running: { runId: 4, sleepDay: '2025-03-10', stepId: 'light-sleep', status: 'running', done: 0, total: 7 } });
    handlers['sleep.runs'] = () => [run()];
    const id = await useSleep.getState().sleepNow();
    expect(id).toBe(4);
    expect(useSleep.getState().progress?.runId).toBe(4);
    await new Promise((r) => setTimeout(r, 0));
    expect(useSleep.getState().progress).toMatchObject({ stepId: 'light-sleep', total: 7 });
  });

  it('follows progress events on the run it shows, and clears them when the cycle ends', async () => {
    handlers['sleep.runs'] = () => [run()];
    await useSleep.getState().refreshRuns();
    useSleep.getState().noteProgress({ runId: 4, sleepDay: '2025-03-10', stepId: 'light-sleep', status: 'done', done: 1, total: 2 });
    expect(useSleep.getState().runs.items[0]!.steps[0]!.status).toBe('done');
    expect(useSleep.getState().progress?.done).toBe(1);

    handlers['sleep.status'] = () => status();
    handlers['sleep.digest'] = () => digest();
    handlers['sleep.audit'] = () => ({ items: [], total: 0 });
    useSleep.getState().noteFinished({ runId: 4, status: 'done', error: null });
    expect(useSleep.getState().progress).toBeNull();
    expect(new Set(calls.map((c) => c.method))).toEqual(new Set(['sleep.runs', 'sleep.status', 'sleep.digest', 'sleep.audit']));
  });

  it('a newer live event is not pushed back by an older status', async () => {
    useSleep.getState().noteProgress({ runId: 4, sleepDay: '2025-03-10', stepId: 'dream', status: 'running', done: 3, total: 7 });
    handlers['sleep.status'] = () => status({ running: { runId: 4, sleepDay: '2025-03-10', stepId: 'light-sleep', status: 'running', done: 1, total: 7 } });
    await useSleep.getState().refreshStatus();
    expect(useSleep.getState().progress?.stepId).toBe('dream');
    handlers['sleep.status'] = () => status();
    await useSleep.getState().refreshStatus();
    expect(useSleep.getState().progress).toBeNull();
  });

  it('undoes a digest change through memories.undo and shows it undone', async () => {
    handlers['sleep.digest'] = () => digest();
    await useSleep.getState().refreshDigest();
    handlers['memories.undo'] = () => ({}) as ApiOutputs['memories.undo'];
    handlers['sleep.digest'] = () => {
      const d = digest();
      d.added[1] = { ...d.added[1]!, undoneBy: 99 };
      return d;
    };
    await useSleep.getState().undoChange(2);
    expect(calls.find((c) => c.method === 'memories.undo')!.input).toEqual({ changeId: 2 });
    expect(useSleep.getState().digest.data!.added[1]!.undoneBy).not.toBeNull();
    expect(useSleep.getState().undoing).toEqual({});
    await new Promise((r) => setTimeout(r, 0));
    expect(useSleep.getState().digest.data!.added[1]!.undoneBy).toBe(99);
  });

  it('resolves a proposal and keeps its new state', async () => {
    handlers['sleep.digest'] = () => digest();
    await useSleep.getState().refreshDigest();
    handlers['sleep.resolveProposal'] = (input) => ({ ...digest().proposals[0]!, status: input.accept ? 'accepted' : 'dismissed' });
    await useSleep.getState().resolveProposal(7, false);
    expect(useSleep.getState().digest.data!.proposals[0]!.status).toBe('dismissed');
  });

  it('filters and pages the audit log, falling back to the first page when a page empties', async () => {
    const entry = (id: number) => ({
      id,
      purpose: 'light-sleep',
      stepId: 'light-sleep',
      runId: 4,
      model: 'fake-model',
      promptChars: 100,
      responseChars: 20,
      promptTokens: 30,
      completionTokens: 8,
      durationMs: 1200,
      status: 'ok' as const,
      error: null,
      createdAt: '2025-03-11T02:01:00.000Z',
    });
    handlers['sleep.audit'] = (input) => (input.offset ? { items: [], total: 3 } : { items: [entry(1), entry(2), entry(3)], total: 3 });
    useSleep.getState().setAuditFilter('error');
    await new Promise((r) => setTimeout(r, 0));
    expect(calls.at(-1)!.input).toEqual({ status: 'error', limit: AUDIT_PAGE });
    useSleep.getState().auditPage(AUDIT_PAGE);
    await new Promise((r) => setTimeout(r, 0));
    await new Promise((r) => setTimeout(r, 0));
    expect(useSleep.getState().audit.offset).toBe(0);
    expect(useSleep.getState().audit.items).toHaveLength(3);
  });

  it('opens an audit entry and forgets a late answer after closing', async () => {
    let resolve!: (v: ApiOutputs['sleep.auditEntry']) => void;
    handlers['sleep.auditEntry'] = () => new Promise((r) => (resolve = r));
    const opening = useSleep.getState().openAudit(3);
    expect(useSleep.getState().auditDetail).toMatchObject({ id: 3, loading: true });
    useSleep.getState().closeAudit();
    resolve({} as ApiOutputs['sleep.auditEntry']);
    await opening;
    expect(useSleep.getState().auditDetail).toBeNull();
  });
});
