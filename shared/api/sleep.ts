// The sleep cycle: its steps and runs, tonight's budget, the audit log of background model calls,
// the morning digest with its proposals, and the sleep.* methods.
import { z } from 'zod';
import type { ErrorCode } from './errors.js';
import { empty, isoDay } from './fields.js';
import type { MemoryActor, MemoryChange } from './memory.js';

export const SLEEP_STEP_IDS = ['memory-ref-sync', 'light-sleep', 'snapshot', 'deep-sleep', 'dream', 'mood-trend', 'digest'] as const;
export type SleepStepId = (typeof SLEEP_STEP_IDS)[number];
export type SleepRunStatus = 'running' | 'done' | 'failed' | 'stopped';
/** 'stopped': cut short by the budget or by the person; what it finished is kept. */
export type SleepStepStatus = 'pending' | 'running' | 'done' | 'failed' | 'skipped' | 'stopped';
export type SleepTrigger = 'schedule' | 'catch-up' | 'manual';

export interface SleepStepInfo {
  stepId: string;
  dependsOn: string[];
  status: SleepStepStatus;
  /** Why it was skipped, or where its result came from ("done in run 4"), in the host's words (English). */
  reason: string | null;
  /** Skipped because a step it needs did not finish: that step and what became of it, for words in any language. */
  waitedFor: { step: string; how: 'failed' | 'skipped' | 'stopped' } | null;
  startedAt: string | null;
  finishedAt: string | null;
  /** Counts: calls, memories written, anchors, … (whatever the step reports). */
  stats: Record<string, number> | null;
  error: string | null;
}

export interface SleepRun {
  id: number;
  sleepDay: string;
  trigger: SleepTrigger;
  status: SleepRunStatus;
  startedAt: string;
  finishedAt: string | null;
  /** Why it stopped or failed, in words ("over tonight's budget: 40 of 40 calls"). */
  error: string | null;
  steps: SleepStepInfo[];
}

export interface SleepProgressEvent {
  runId: number;
  sleepDay: string;
  stepId: string;
  status: SleepStepStatus;
  /** Steps finished (done, failed or skipped) out of total. */
  done: number;
  total: number;
}

export interface SleepBudgetUse {
  /** What the current night (sleep day) has used so far. */
  calls: number;
  tokens: number;
  maxCalls: number;
  maxTokens: number;
}

export interface SleepStatus {
  running: SleepProgressEvent | null;
  lastRun: SleepRun | null;
  /** When the next scheduled cycle starts (ISO 8601). */
  nextAt: string;
  /** The sleep day a cycle would work on now. */
  sleepDay: string;
  budget: SleepBudgetUse;
  /** Why "Sleep now" cannot run, if it cannot (no model connection), in the host's words… */
  blocked: string | null;
  /** …and as an error code the UI puts in the person's language. */
  blockedCode: ErrorCode | null;
}

export interface AuditEntry {
  id: number;
  purpose: string;
  stepId: string | null;
  runId: number | null;
  model: string;
  promptChars: number;
  responseChars: number;
  promptTokens: number | null;
  completionTokens: number | null;
  durationMs: number;
  status: 'ok' | 'error' | 'invalid';
  error: string | null;
  createdAt: string;
}

export interface AuditEntryDetail extends AuditEntry {
  prompt: string;
  response: string;
}

/** One line of the morning digest: a journalled change the cycle made, undoable. */
export interface DigestChange {
  changeId: number;
  memoryId: number;
  action: MemoryChange['action'];
  actor: MemoryActor;
  /** The memory's text now (for a create or an update) or before (for a supersede or expiry). */
  text: string;
  /** Why, in words (English for the host's own reasons), and for those the code the window words in its language. */
  reason: string | null;
  reasonCode?: MemoryChange['reasonCode'];
  /** Set once undone. */
  undoneBy: number | null;
}

/**
 * Why deep sleep's pin review proposes what it does: a pin not used in a reply since `day` (YYYY-MM-DD)
 * or never used; a pin carried `days` days and shown to the model `shown` times, never cited; a memory
 * used in `replies` replies.
 */
export type ProposalReason =
  | { code: 'unused_since'; day: string }
  | { code: 'never_used' }
  | { code: 'carried_uncited'; days: number; shown: number }
  | { code: 'much_used'; replies: number };

export interface SleepProposal {
  id: number;
  memoryId: number;
  action: 'pin' | 'unpin';
  text: string;
  /** Why, in words (English for the host's own reasons), and for those the code the window words in its language. */
  reason: string;
  reasonCode?: ProposalReason | null;
  status: 'open' | 'accepted' | 'dismissed';
}

export interface SleepDigest {
  day: string;
  runId: number;
  createdAt: string;
  /** The digest's own words: "While I slept I …". */
  summary: string;
  added: DigestChange[];
  changed: DigestChange[];
  superseded: DigestChange[];
  proposals: SleepProposal[];
  diary: { anchors: number; imprints: number; narratives: number; dreams: number };
}

/**
 * Imported history and its catch-up ("read my imported history"): an import is marked as read by the
 * night, so its messages wait here until the person asks the companion to read them, day by day in
 * the background. `unread`: history is waiting and the catch-up was not asked for (Settings offers it);
 * `done`: every imported day has been read; `none`: nothing was imported.
 */
export type ImportedHistoryState = 'none' | 'unread' | 'reading' | 'paused' | 'done';

export interface ImportedHistoryStatus {
  state: ImportedHistoryState;
  /** Imported conversations and their messages (the history, read or not). */
  conversations: number;
  messages: number;
  /** The first and last imported message (ISO 8601), null when none. */
  from: string | null;
  to: string | null;
  /** Sleep days the history spans, and of them those read. */
  daysTotal: number;
  daysRead: number;
  /** About how many nights' allowance reading the rest takes (an estimate from its length). */
  nightsLeft: number;
  /** A pass is reading right now. */
  active: boolean;
  /** Why it is not reading right now although asked to: the person is chatting, a night runs, today's allowance is spent, no model. */
  waiting: 'chatting' | 'sleeping' | 'allowance' | 'no_model' | null;
  /** Why the last pass stopped early (the model failed), in the host's words. */
  error: string | null;
  /** What the catch-up may spend per sleep day (half a night's budget) and what it spent today. */
  allowance: { calls: number; tokens: number; maxCalls: number; maxTokens: number };
}

export const sleepInputs = {
  /** The cycle now: running or not, the last run, the next scheduled time, tonight's budget use. */
  'sleep.status': empty,
  /** Start a cycle now for the current sleep day; progress arrives as sleep.progress events. */
  'sleep.now': empty,
  /** Stop the running cycle at the next step boundary (what is done stays done). */
  'sleep.stop': empty,
  'sleep.runs': z.object({ limit: z.number().int().min(1).max(100).optional() }).strict(),
  /** The audit log of background model calls, newest first. */
  'sleep.audit': z
    .object({
      status: z.enum(['ok', 'error', 'invalid']).optional(),
      limit: z.number().int().min(1).max(200).optional(),
      offset: z.number().int().min(0).optional(),
    })
    .strict(),
  'sleep.auditEntry': z.object({ id: z.number().int().positive() }).strict(),
  /** The latest morning digest (or the one of a given sleep day). */
  'sleep.digest': z
    .object({
      day: isoDay.optional(),
    })
    .strict(),
  /** Accept (pin/unpin as proposed) or dismiss a proposal from deep sleep's pin review. */
  'sleep.resolveProposal': z.object({ id: z.number().int().positive(), accept: z.boolean() }).strict(),
  /** Imported history: how much, how much of it is read, and whether the catch-up reads it. */
  'sleep.importedHistory': empty,
  /** Start (or resume) reading the imported history in the background, or pause it after the day in hand. */
  'sleep.readImportedHistory': z.object({ action: z.enum(['start', 'pause']) }).strict(),
} as const;

export interface SleepOutputs {
  'sleep.status': SleepStatus;
  'sleep.now': { runId: number | null; sleepDay: string };
  'sleep.stop': { stopped: boolean };
  'sleep.runs': SleepRun[];
  'sleep.audit': { items: AuditEntry[]; total: number };
  'sleep.auditEntry': AuditEntryDetail;
  'sleep.digest': SleepDigest | null;
  'sleep.resolveProposal': SleepProposal;
  'sleep.importedHistory': ImportedHistoryStatus;
  'sleep.readImportedHistory': ImportedHistoryStatus;
}
