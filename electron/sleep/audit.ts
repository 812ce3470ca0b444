// Every model call the companion makes on its own (the sleep cycle, later other background work)
// goes through here: the answer must be JSON of a known shape, a malformed answer gets exactly one
// chance to be repaired, and every attempt is recorded in auto_llm_runs so the person can see what
// was asked and answered while they were away. Nothing here touches the messages table: these calls
// are not part of any conversation.
//
// Structured answers: unless the connection is known to refuse it, the request carries the answer's
// JSON Schema (answer-schema.ts), which each client asks for the way its server understands
// (`response_format: json_schema`, Ollama's `format`, a forced tool call). A server that refuses it —
// a 400 (llama.cpp once said 500) naming the field — is remembered for the connection (`refused`) and
// the same call is asked again at once by the prompt alone; the refusal's own row stays in the log.
// Each row says which way it was asked (`asked`).
import type { z } from 'zod';
import { estimateTokens, userFirst } from '../llm/context.js';
import type { Database } from '../db/open.js';
import { ProviderError, type ChatProvider, type ChatTurn, type StreamRequest } from '../llm/types.js';
import { answerSchema } from './answer-schema.js';
import type { BackgroundPurpose } from '../../shared/background-purposes.js';

/** Answers beyond this are cut off (and thus invalid): no sleep step needs more, and a runaway model should not fill the disk. */
export const MAX_RESPONSE_CHARS = 200 * 1024;
/** How much of a bad answer is shown back to the model in the repair turn. */
const REPAIR_ECHO_CHARS = 4_000;
/** Below this much of it, the repair turn names the problem without quoting the answer. */
const MIN_ECHO_CHARS = 200;
/** The repair request's own words and the two extra turns, in tokens (generous). */
const REPAIR_OVERHEAD_TOKENS = 80;

export interface AuditedCallOptions<T> {
  purpose: BackgroundPurpose;
  stepId?: string | null;
  runId?: number | null;
  model: string;
  messages: ChatTurn[];
  schema: z.ZodType<T>;
  maxTokens?: number;
  /**
   * The model's context window. The first prompt is sized to fill it less the answer; the repair
   * turn then quotes only as much of the bad answer as still fits (or none), so it is not refused
   * as too long.
   */
  contextTokens?: number;
  signal?: AbortSignal;
  /** Ask with the answer's JSON Schema; absent: by the prompt alone. */
  structured?: StructuredAnswers;
}

export interface StructuredAnswers {
  /** False when the connection is known to refuse a schema (or cannot take one): the prompt alone. */
  enabled: boolean;
  /** The server refused the schema (its words): remember it for the connection. Called at most once a call. */
  refused(said: string): Promise<void>;
}

/** How a call was asked, as its audit row records it. */
export type Asked = 'schema' | 'prompt';

/** The words of every repair turn (a benchmark counts repair calls by them). */
export const REPAIR_REQUEST = 'Reply again with only the JSON value, no explanation and no code fence.';

/**
 * An HTTP refusal that names the structured-output field: OpenAI "Invalid parameter: 'response_format'
 * of type 'json_schema' is not supported with this model.", vLLM before json_schema "… ('body',
 * 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\" …", llama.cpp before
 * it (HTTP 500) 'response_format type must be one of "text" or "json_object", but got: json_schema', LM
 * Studio "'response_format.json_schema.schema' must be an object", Anthropic "Thinking may not be
 * enabled when tool_choice forces tool use.", Ollama's `format`. A failure after text streamed, a
 * timeout or an unreachable server is never one.
 */
export function isSchemaRefusal(err: unknown): err is ProviderError {
  if (!(err instanceof ProviderError) || err.midStream || err.status === undefined) return false;
  if (!(err.status === 400 || err.status === 422 || err.status === 500 || err.status === 501)) return false;
  return /response_format|json_schema|tool_choice|\bformat\b/i.test(err.message);
}

/** `error`: the call itself failed (connection, HTTP); `invalid`: an answer came but could not be used. */
export type AuditedResult<T> = { ok: true; value: T } | { ok: false; kind: 'error' | 'invalid'; error: string };

interface Attempt {
  text: string;
  truncated: boolean;
  inputTokens?: number;
  outputTokens?: number;
}

function renderPrompt(messages: ChatTurn[]): string {
  return messages.map((m) => `[${m.role}]\n${m.content}`).join('\n\n');
}

async function collect(provider: ChatProvider, opts: AuditedCallOptions<unknown>, messages: ChatTurn[], asked: Asked): Promise<Attempt> {
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  const attempt: Attempt = { text: '', truncated: false };
  try {
    const request: StreamRequest = { model: opts.model, messages: userFirst(messages), maxTokens: opts.maxTokens, signal: controller.signal };
    if (asked === 'schema') request.responseSchema = answerSchema(opts.purpose, opts.schema);
    for await (const event of provider.stream(request)) {
      if (event.type === 'text') {
        attempt.text += event.text;
        if (attempt.text.length > MAX_RESPONSE_CHARS) {
          attempt.text = attempt.text.slice(0, MAX_RESPONSE_CHARS);
          attempt.truncated = true;
          // Leaving the loop ends the stream; the abort also drops the connection at once.
          controller.abort();
          break;
        }
      } else if (event.type === 'done') {
        attempt.inputTokens = event.usage?.inputTokens;
        attempt.outputTokens = event.usage?.outputTokens;
      }
    }
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
  }
  return attempt;
}

/** The JSON inside the answer: the whole text, or the body of a ```json fence around it. */
function extractJson(text: string): string {
  const trimmed = text.trim();
  const fenced = /^```(?:json)?\s*\n?([\s\S]*?)\n?```$/i.exec(trimmed);
  return fenced ? fenced[1]!.trim() : trimmed;
}

function validate<T>(attempt: Attempt, schema: z.ZodType<T>): { ok: true; value: T } | { ok: false; problem: string } {
  if (attempt.truncated) return { ok: false, problem: `the answer was longer than ${MAX_RESPONSE_CHARS} characters and was cut off` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(extractJson(attempt.text));
  } catch (err) {
    return { ok: false, problem: `it is not valid JSON (${(err as Error).message})` };
  }
  const result = schema.safeParse(parsed);
  if (result.success) return { ok: true, value: result.data };
  const issues = result.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`).join('; ');
  return { ok: false, problem: `it does not match the expected shape (${issues})` };
}

async function record(
  db: Database,
  opts: AuditedCallOptions<unknown>,
  row: { prompt: string; response: string; attempt?: Attempt; durationMs: number; status: 'ok' | 'error' | 'invalid'; error: string | null; asked: Asked },
): Promise<void> {
  await db.query(
    `INSERT INTO auto_llm_runs (purpose, step_id, run_id, model, prompt_chars, response_chars, prompt_tokens,
       completion_tokens, duration_ms, status, error, prompt, response, asked)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
    [
      opts.purpose,
      opts.stepId ?? null,
      opts.runId ?? null,
      opts.model,
      row.prompt.length,
      row.response.length,
      row.attempt?.inputTokens ?? null,
      row.attempt?.outputTokens ?? null,
      Math.round(row.durationMs),
      row.status,
      row.error,
      row.prompt,
      row.response,
      row.asked,
    ],
  );
}

/**
 * Asks the model for JSON matching `schema`. At most two model calls (the second only to repair a
 * malformed answer), each recorded as one auto_llm_runs row — plus, once, the call a server refused
 * for its schema, asked again by the prompt alone. Never throws for model problems; database errors
 * do propagate.
 */
export async function auditedCall<T>(db: Database, provider: ChatProvider, opts: AuditedCallOptions<T>): Promise<AuditedResult<T>> {
  let messages = opts.messages;
  let asked: Asked = opts.structured?.enabled ? 'schema' : 'prompt';
  for (let round = 0; round < 2; round++) {
    const prompt = renderPrompt(messages);
    const started = performance.now();
    let attempt: Attempt;
    try {
      attempt = await collect(provider, opts as AuditedCallOptions<unknown>, messages, asked);
    } catch (err) {
      const error = err instanceof ProviderError || err instanceof Error ? err.message : String(err);
      await record(db, opts as AuditedCallOptions<unknown>, { prompt, response: '', durationMs: performance.now() - started, status: 'error', error, asked });
      if (asked === 'schema' && isSchemaRefusal(err) && !opts.signal?.aborted) {
        // The same call again, by the prompt alone; the connection asks so from now on.
        await opts.structured!.refused(err.message);
        asked = 'prompt';
        round--;
        continue;
      }
      return { ok: false, kind: 'error', error };
    }
    const durationMs = performance.now() - started;
    const checked = validate(attempt, opts.schema);
    if (checked.ok) {
      await record(db, opts as AuditedCallOptions<unknown>, { prompt, response: attempt.text, attempt, durationMs, status: 'ok', error: null, asked });
      return { ok: true, value: checked.value };
    }
    await record(db, opts as AuditedCallOptions<unknown>, {
      prompt,
      response: attempt.text,
      attempt,
      durationMs,
      status: 'invalid',
      error: `Invalid answer: ${checked.problem}`,
      asked,
    });
    if (round === 1) return { ok: false, kind: 'invalid', error: `Invalid answer: ${checked.problem}` };
    // One repair turn: show the model its answer (as much as fits) and what was wrong, ask for the JSON alone.
    const shown = repairEcho(attempt.text, opts, attempt.inputTokens);
    const again = REPAIR_REQUEST;
    messages = shown
      ? [...opts.messages, { role: 'assistant', content: shown }, { role: 'user', content: `That answer could not be used: ${checked.problem}. ${again}` }]
      : [...opts.messages, { role: 'user', content: `Your previous answer could not be used: ${checked.problem}. ${again}` }];
  }
  return { ok: false, kind: 'invalid', error: 'Invalid answer' };
}

/**
 * The part of a bad answer the repair turn quotes: at most REPAIR_ECHO_CHARS, and with a known
 * context window only what fits beside the first prompt and the answer to come; '' when too little
 * would fit to be worth showing.
 */
export function repairEcho(text: string, opts: Pick<AuditedCallOptions<unknown>, 'messages' | 'maxTokens' | 'contextTokens'>, promptTokens?: number): string {
  let limit = REPAIR_ECHO_CHARS;
  if (opts.contextTokens) {
    const used = Math.max(
      promptTokens ?? 0,
      opts.messages.reduce((sum, m) => sum + estimateTokens(m.content), 0),
    );
    const spare = opts.contextTokens - used - (opts.maxTokens ?? 0) - REPAIR_OVERHEAD_TOKENS;
    // Two characters a token: small local tokenizers spend about that on English.
    limit = Math.min(limit, Math.max(0, spare * 2));
  }
  if (text.length <= limit) return text;
  return limit < MIN_ECHO_CHARS ? '' : `${text.slice(0, limit)}\n[… cut off …]`;
}
