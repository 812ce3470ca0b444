// What every round of deep sleep works with: the night's stats, the background call, the material
// budget, one operation applied as its own batch, and packing groups of lines into a few calls.
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { ApiError } from '../../../../shared/api.js';
import { estimateTokens } from '../../../llm/context.js';
import type { MemoryBatch } from '../../../memory/store.js';
import { BudgetExhaustedError, type BackgroundModel } from '../../background.js';
import { CycleStop, StepFailure, type StepContext } from '../../dag.js';
import type { modelForRun, SleepStepDeps } from '../deps.js';
import type { BackgroundPurpose } from '../../../../shared/background-purposes.js';

/** How a round ended: it ran to its end, or the night was stopped in it (the step returns at once). */
export type RoundEnd = 'done' | 'stopped';

export interface Night {
  /** The step's stats, carried by CycleStop and StepFailure too. */
  stats: Record<string, number>;
  bump(key: string, n?: number): void;
  /**
   * One background call: its validated answer; null when the answer was invalid (counted). The
   * night's budget spent stops the night (CycleStop); a connection that fails fails the step.
   */
  ask<T>(purpose: BackgroundPurpose, instructions: string, material: string, schema: z.ZodType<T>): Promise<T | null>;
  /** The tokens of material one call with these instructions holds. */
  budgetFor(instructions: string): Promise<number>;
  /** Applies one operation in its own transaction and batch: one undo per line of the digest. False when it was refused. */
  apply(what: string, fn: (b: MemoryBatch, batchId: string) => Promise<void>): Promise<boolean>;
}

const MAX_TOKENS = 2048;

/** The tools of one deep sleep; the background model opens on first use (a night with nothing to review needs none). */
export function openNight(deps: SleepStepDeps, ctx: StepContext, model: ReturnType<typeof modelForRun>): Night {
  const stats: Record<string, number> = {
    reviewed: 0,
    calls: 0,
    invalid: 0,
    superseded: 0,
    expired: 0,
    split: 0,
    merged: 0,
    refused: 0,
    proposals: 0,
    relations_closed: 0,
    profiles: 0,
  };
  const bump = (k: string, n = 1) => (stats[k] = (stats[k] ?? 0) + n);
  let bg: BackgroundModel | null = null;
  return {
    stats,
    bump,
    async ask(purpose, instructions, material, schema) {
      bg ??= await model(ctx);
      let result;
      try {
        result = await bg.call({ purpose, stepId: ctx.stepId, runId: ctx.runId, instructions, material, schema, maxTokens: MAX_TOKENS, signal: ctx.signal });
      } catch (err) {
        if (err instanceof BudgetExhaustedError) throw new CycleStop(err.message, stats);
        throw err;
      }
      bump('calls');
      await ctx.heartbeat();
      if (result.ok) return result.value;
      if (result.kind === 'error') throw new StepFailure(`The background model did not answer during deep sleep: ${result.error}`, stats);
      bump('invalid');
      return null;
    },
    async budgetFor(instructions) {
      bg ??= await model(ctx);
      return bg.materialBudget(instructions, MAX_TOKENS);
    },
    async apply(what, fn) {
      try {
        await deps.store.batch((b) => fn(b, randomUUID()));
        bump(what);
        return true;
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        bump('refused');
        deps.log('info', `deep sleep: ${what} refused: ${err.message}`);
        return false;
      }
    },
  };
}

/**
 * Groups of text packed into at most `maxCalls` prompts of `budget` tokens; what does not fit waits.
 * `taken` is how many groups were dealt with (sent, or passed over because one alone exceeds a call);
 * groups from `taken` on did not fit tonight's calls.
 */
export function pack(groups: string[], budget: number, maxCalls: number): { calls: string[][]; taken: number } {
  const calls: string[][] = [];
  let call: string[] = [];
  let used = 0;
  for (const [i, g] of groups.entries()) {
    const cost = estimateTokens(g) + 4;
    if (cost > budget) continue;
    if (used + cost > budget && call.length) {
      calls.push(call);
      if (calls.length === maxCalls) return { calls, taken: i };
      call = [];
      used = 0;
    }
    call.push(g);
    used += cost;
  }
  if (call.length && calls.length < maxCalls) calls.push(call);
  return { calls, taken: groups.length };
}
