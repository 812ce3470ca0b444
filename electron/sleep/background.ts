// The background model as the sleep steps see it: which connection to use, how much context it has,
// who is speaking (every prompt carries the companion's identity — a generic extraction assistant
// writes a generic diary), and the night's budget. Every call goes through auditedCall.
import type { z } from 'zod';
import { ApiError } from '../../shared/api.js';
import { DEFAULT_CHARS_PER_TOKEN, estimateTokens } from '../llm/context.js';
import { buildSystemPrompt } from '../companion/prompt.js';
import type { SelfLayer } from '../companion/self-layer.js';
import type { Database } from '../db/open.js';
import type { Providers } from '../providers/providers.js';
import type { SettingsStore } from '../settings/settings.js';
import type { ChatProvider } from '../llm/types.js';
import { buildResident } from '../memory/resident.js';
import { auditedCall, type AuditedResult, type StructuredAnswers } from './audit.js';
import { TASK_PREFIX } from './schemas.js';
import type { BackgroundPurpose } from '../../shared/background-purposes.js';

/** Thrown (by a step) when tonight's budget is spent; the runner stops the cycle at the step boundary. */
export class BudgetExhaustedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BudgetExhaustedError';
  }
}

export interface BudgetUse {
  calls: number;
  tokens: number;
}

/** A nap's audit rows carry the sleep day they count against in their step id ("nap:2026-12-03"): no run holds them. */
export function napStepId(sleepDay: string): string {
  return `nap:${sleepDay}`;
}

/**
 * What the background model has used for one sleep day, counted from the audit log (so a resumed or
 * repeated night counts what earlier runs of the same day already spent). Tokens are the provider's
 * counts where it reported them, otherwise estimated from the characters sent and received. The day's
 * naps count too: daytime memory spends the same night's allowance.
 */
export async function budgetUse(db: Database, sleepDay: string): Promise<BudgetUse> {
  const row = (
    await db.query<{ calls: number; tokens: number }>(
      `SELECT count(*)::int AS calls,
              coalesce(sum(coalesce(a.prompt_tokens, ceil(a.prompt_chars / 4.0)::int)
                          + coalesce(a.completion_tokens, ceil(a.response_chars / 4.0)::int)), 0)::float8 AS tokens
         FROM auto_llm_runs a LEFT JOIN sleep_runs r ON r.id = a.run_id
        WHERE r.sleep_day = $1 OR (a.run_id IS NULL AND a.step_id = $2)`,
      [sleepDay, napStepId(sleepDay)],
    )
  ).rows[0]!;
  return { calls: Number(row.calls), tokens: Number(row.tokens) };
}

export interface BackgroundModelInfo {
  /** The connection (providers row). */
  id: string;
  client: ChatProvider;
  model: string;
  contextTokens: number;
  /** Characters a token on this connection's server, as its own counts showed (providers.chars_per_token); undefined: the default rule. */
  charsPerToken?: number;
}

export interface BackgroundDeps {
  db: Database;
  providers: Providers;
  settings: SettingsStore;
  selfLayer: SelfLayer;
  now: () => Date;
}

/** The connection for background work: the chosen background model, else the chat model. */
export async function resolveBackgroundModel(deps: Pick<BackgroundDeps, 'providers' | 'settings'>): Promise<BackgroundModelInfo> {
  const s = await deps.settings.get();
  const id = s.backgroundProviderId ?? s.chatProviderId;
  if (!id) throw new ApiError('no_provider', 'There is no model connection for the sleep cycle yet. Add one in Settings → Models.');
  const { config, client } = await deps.providers.resolve(id);
  return { id, client, model: config.model, contextTokens: config.contextTokens, charsPerToken: (await deps.providers.charsPerToken(id)) ?? undefined };
}

/**
 * Tokens a request's material may use: the context less the preamble, the instructions and the
 * answer — in the default rule's tokens, since every step packs its material by that rule. Where
 * the connection's server has shown it counts more tokens per character (chars_per_token below the
 * default), the room shrinks by as much, so the packed request fits the server's own count.
 */
export function materialRoom(o: { contextTokens: number; charsPerToken?: number; identity: string; instructions: string; maxTokens: number }): number {
  const ratio = o.charsPerToken ?? DEFAULT_CHARS_PER_TOKEN;
  const overhead = estimateTokens(o.identity, ratio) + estimateTokens(o.instructions, ratio) + 64;
  return Math.max(256, Math.floor((o.contextTokens - overhead - o.maxTokens) * (ratio / DEFAULT_CHARS_PER_TOKEN)));
}

/** Night work ("asleep") or a short daytime pass over a conversation that just went quiet ("nap"). */
export type BackgroundMode = 'asleep' | 'nap';

const SITUATION: Record<BackgroundMode, string> = {
  asleep: 'I am asleep: nobody is talking with me now. I am going over my own memories to keep what matters.',
  nap: 'A conversation has just gone quiet, and I am taking a short pause to note what from it is worth remembering.',
};

/**
 * The companion's system prompt (self blocks, resident memory) followed by what is different now.
 * It comes last on purpose: the chat prompt tells me how I answer a person (in first person, citing
 * memory markers), and here the last word has to be that the answer is JSON and nothing else.
 */
export function backgroundIdentity(systemPrompt: string, mode: BackgroundMode): string {
  return [
    systemPrompt,
    `# ${mode === 'asleep' ? 'While I sleep' : 'A pause in the day'}\n${SITUATION[mode]} I do this in my own words and as myself. ` +
      'My answer here is read by my memory, not by a person: I answer with the JSON asked for and nothing else — no greeting, ' +
      'no explanation, no code fence and no [[anima:…]] markers (those are for conversations). I never store passwords, keys, ' +
      'card numbers or other secrets, even when they were said to me.',
  ].join('\n\n');
}

/** One background call: the task's instructions, the material, and the JSON shape of the answer. */
export interface BackgroundRequest<T> {
  /** Audit purpose and the task line: "light-sleep", "deep-sleep:merge", "dream". */
  purpose: BackgroundPurpose;
  stepId: string | null;
  /** Null for a call outside a sleep run (the nap). */
  runId: number | null;
  instructions: string;
  material: string;
  schema: z.ZodType<T>;
  maxTokens: number;
  signal: AbortSignal;
}

/**
 * The background model for one run: resolved once, with the identity preamble built once (the self
 * layer and resident memory do not change while the companion sleeps, except by the cycle itself,
 * and tomorrow's prompt picks that up).
 */
export class BackgroundModel {
  private constructor(
    private readonly db: Database,
    readonly info: BackgroundModelInfo,
    readonly identity: string,
    private readonly sleepDay: string,
    private readonly limits: { maxCalls: number; maxTokens: number },
    private readonly structured: StructuredAnswers,
  ) {}

  static async open(deps: BackgroundDeps, sleepDay: string, mode: BackgroundMode = 'asleep'): Promise<BackgroundModel> {
    const info = await resolveBackgroundModel(deps);
    const s = await deps.settings.get();
    const resident = await buildResident(deps.db, { topN: s.memory.residentTopN });
    const identity = backgroundIdentity(
      buildSystemPrompt({
        selfBlocks: await deps.selfLayer.list(),
        sleepDay,
        timeZone: s.timeZone,
        now: deps.now(),
        extraSections: resident.text ? [{ body: resident.text }] : [],
      }),
      mode,
    );
    // Structured answers unless this connection's server refused a schema before; the on-device
    // model has no way to be held to one (it is asked by prompt, as always).
    const structured: StructuredAnswers = {
      enabled: info.client.kind !== 'local' && (await deps.providers.schemaRefusal(info.id)) === null,
      async refused(said) {
        structured.enabled = false;
        await deps.providers.rememberSchemaRefusal(info.id, said);
      },
    };
    return new BackgroundModel(deps.db, info, identity, sleepDay, { maxCalls: s.sleep.maxCallsPerNight, maxTokens: s.sleep.maxTokensPerNight }, structured);
  }

  /** Tokens a request's material may use: the context minus the preamble, instructions and answer. */
  materialBudget(instructions: string, maxTokens: number): number {
    return materialRoom({ ...this.info, identity: this.identity, instructions, maxTokens });
  }

  /** Throws BudgetExhaustedError when tonight's calls or tokens are spent. */
  async checkBudget(): Promise<void> {
    const used = await budgetUse(this.db, this.sleepDay);
    if (used.calls >= this.limits.maxCalls || used.tokens >= this.limits.maxTokens) {
      throw new BudgetExhaustedError(
        `Over tonight's budget for background work (${used.calls} of ${this.limits.maxCalls} calls, ` +
          `${Math.round(used.tokens)} of ${this.limits.maxTokens} tokens); the rest waits for the next night.`,
      );
    }
  }

  async call<T>(req: BackgroundRequest<T>): Promise<AuditedResult<T>> {
    await this.checkBudget();
    return auditedCall(this.db, this.info.client, {
      purpose: req.purpose,
      stepId: req.stepId,
      runId: req.runId,
      model: this.info.model,
      schema: req.schema,
      maxTokens: req.maxTokens,
      contextTokens: this.info.contextTokens,
      signal: req.signal,
      structured: this.structured,
      messages: [
        { role: 'system', content: this.identity },
        { role: 'user', content: `${TASK_PREFIX}${req.purpose}\n\n${req.instructions.trim()}\n\n${req.material.trim()}` },
      ],
    });
  }
}
