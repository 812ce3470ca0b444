// Model connections (providers): their kinds, a saved one as the UI sees it, testing one, finding
// servers on this computer, and the providers.* methods.
import { z } from 'zod';
import type { ErrorCode } from './errors.js';
import { empty, id } from './fields.js';

/** `ollama`: Ollama's own API (`/api/chat`), which, unlike its `/v1` route, can be told the context to run with. */
export const PROVIDER_KINDS = ['openai-compatible', 'anthropic', 'local', 'ollama'] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

export interface ProviderConfig {
  id: string;
  kind: ProviderKind;
  name: string;
  baseUrl: string;
  model: string;
  /** The model's context window in tokens as the person set it; history beyond it is trimmed, oldest first. */
  contextTokens: number;
  hasApiKey: boolean;
  /** What the server itself said about this model when last asked; null when it has not been asked or said nothing. */
  server: ServerFacts | null;
  /** What the model can do for Anima, in `providers.list` and `providers.save` (electron/providers/abilities.ts). */
  abilities?: ProviderAbilities;
  /** How chat replies are generated on this connection; unset values are not sent (the server's default). */
  generation: GenerationSettings;
}

/**
 * Generation settings for chat replies, sent in each protocol's own fields (OpenAI-compatible
 * `temperature`, `top_p`, `max_tokens`/`max_completion_tokens`, `stop`; Anthropic `temperature`,
 * `top_p`, `max_tokens`, `stop_sequences`; Ollama `options.temperature`, `top_p`, `num_predict`,
 * `stop`). null or an empty list: not sent, so the server's own default applies. The sleep cycle's
 * calls keep their own settings.
 */
export interface GenerationSettings {
  temperature: number | null;
  topP: number | null;
  /** The longest reply, in tokens. */
  maxTokens: number | null;
  /** Text that ends a reply where the model writes it (not shown). */
  stop: string[];
}

export const DEFAULT_GENERATION: GenerationSettings = { temperature: null, topP: null, maxTokens: null, stop: [] };

/** The bounds every server accepts (Anthropic's temperature stops at 1); OpenAI takes at most four stop sequences. */
export const GENERATION_LIMITS = {
  temperature: { min: 0, max: 2, anthropicMax: 1 },
  topP: { min: 0, max: 1 },
  /** At most this share of the connection's context: the rest is for the conversation. */
  maxTokens: { min: 1, contextShare: 0.5 },
  stop: { count: 4, chars: 50 },
} as const;

export type GenerationProblem =
  | { field: 'temperature'; problem: 'range'; min: number; max: number }
  | { field: 'topP'; problem: 'range'; min: number; max: number }
  | { field: 'maxTokens'; problem: 'range'; min: number; max: number }
  | { field: 'stop'; problem: 'count'; max: number }
  | { field: 'stop'; problem: 'empty' }
  | { field: 'stop'; problem: 'length'; max: number };

/**
 * What is wrong with these settings for a connection of this kind and context size (empty when
 * nothing): one rule for the form and the providers room.
 */
export function generationProblems(kind: ProviderKind, g: GenerationSettings, contextTokens: number): GenerationProblem[] {
  const L = GENERATION_LIMITS;
  const problems: GenerationProblem[] = [];
  const tMax = kind === 'anthropic' ? L.temperature.anthropicMax : L.temperature.max;
  const inRange = (v: number, min: number, max: number) => Number.isFinite(v) && v >= min && v <= max;
  if (g.temperature !== null && !inRange(g.temperature, L.temperature.min, tMax))
    problems.push({ field: 'temperature', problem: 'range', min: L.temperature.min, max: tMax });
  if (g.topP !== null && !inRange(g.topP, L.topP.min, L.topP.max)) problems.push({ field: 'topP', problem: 'range', min: L.topP.min, max: L.topP.max });
  const tokensMax = Math.max(L.maxTokens.min, Math.floor(contextTokens * L.maxTokens.contextShare));
  if (g.maxTokens !== null && (!Number.isInteger(g.maxTokens) || !inRange(g.maxTokens, L.maxTokens.min, tokensMax)))
    problems.push({ field: 'maxTokens', problem: 'range', min: L.maxTokens.min, max: tokensMax });
  if (g.stop.length > L.stop.count) problems.push({ field: 'stop', problem: 'count', max: L.stop.count });
  if (g.stop.some((s) => s.trim() === '')) problems.push({ field: 'stop', problem: 'empty' });
  if (g.stop.some((s) => s.length > L.stop.chars)) problems.push({ field: 'stop', problem: 'length', max: L.stop.chars });
  return problems;
}

/** A problem in English words (the API's error message; the form has its own, translated). */
export function describeGenerationProblem(p: GenerationProblem): string {
  switch (p.field) {
    case 'temperature':
      return `The temperature must be a number from ${p.min} to ${p.max}.`;
    case 'topP':
      return `Top-p must be a number from ${p.min} to ${p.max}.`;
    case 'maxTokens':
      return `The longest reply must be a whole number of tokens from ${p.min} to ${p.max} (half of this connection's context).`;
    case 'stop':
      return p.problem === 'count'
        ? `At most ${p.max} stop sequences.`
        : p.problem === 'empty'
          ? 'A stop sequence cannot be empty or only spaces.'
          : `A stop sequence can be at most ${p.max} characters long.`;
  }
}

/** 'unknown': neither the server said nor is it known of this kind of connection. */
export type Ability = 'yes' | 'no' | 'unknown';

/**
 * What a connection's model can do for Anima: chat; tools (it saves and recalls memories itself);
 * structured answers (a JSON Schema honoured, so the night's answers can be read); embeddings; images.
 */
export interface ProviderAbilities {
  chat: Ability;
  tools: Ability;
  structured: Ability;
  embeddings: Ability;
  images: Ability;
}

/** Model servers whose own endpoints say how large a context they really give. */
export const SERVER_SOFTWARE = ['ollama', 'llama.cpp', 'lm-studio', 'vllm'] as const;
export type ServerSoftware = (typeof SERVER_SOFTWARE)[number];

/**
 * What a server says about the connection's model: Ollama `/api/show` (and `/api/ps`), llama.cpp
 * `/props`, LM Studio's model listing, vLLM `/v1/models`. Anima budgets the smaller of
 * `contextTokens` here and the person's setting.
 */
export interface ServerFacts {
  /** Which server answered, when it could be told apart. */
  software: ServerSoftware | null;
  /** The context window the server gives this model, in tokens; null when it does not say. */
  contextTokens: number | null;
  /** Ollama's words for what the model can do: completion, tools, vision, thinking, embedding, … */
  capabilities: string[] | null;
  /** The model's family as the server names it (Ollama's details.family: llama, qwen2, gemma3, …). */
  family: string | null;
  /** When the server was asked (ISO time). */
  checkedAt: string;
}

export interface ConnectionTestResult {
  ok: boolean;
  message: string;
  code?: ErrorCode;
  models: string[];
  latencyMs: number;
  /** What the server said about the chosen model (its real context window, …), when it said anything. */
  server?: ServerFacts;
}

export interface DetectedServer {
  name: string;
  kind: ProviderKind;
  baseUrl: string;
  models: string[];
}

const providerInput = z
  .object({
    id: id.optional(),
    kind: z.enum(PROVIDER_KINDS),
    name: z.string().trim().min(1).max(80),
    baseUrl: z.string().max(500),
    model: z.string().max(200),
    contextTokens: z.number().int().min(512).max(10_000_000).optional(),
    /** undefined: keep the stored key; '': remove it; otherwise the new key. */
    apiKey: z.string().max(500).optional(),
    /** undefined: keep the stored settings; otherwise all of them (DEFAULT_GENERATION resets). Ranges: generationProblems. */
    generation: z
      .object({
        temperature: z.number().nullable(),
        topP: z.number().nullable(),
        maxTokens: z.number().int('The longest reply must be a whole number of tokens.').nullable(),
        stop: z.array(z.string().max(1000)).max(100),
      })
      .strict()
      .optional(),
  })
  .strict();

export const providersInputs = {
  'providers.list': empty,
  'providers.save': providerInput,
  'providers.delete': z.object({ id }).strict(),
  /** Test either a saved provider (id) or unsaved form values. */
  'providers.test': providerInput.partial({ name: true }),
  'providers.detect': empty,
} as const;

export interface ProvidersOutputs {
  'providers.list': ProviderConfig[];
  'providers.save': ProviderConfig;
  'providers.delete': { ok: true };
  'providers.test': ConnectionTestResult;
  'providers.detect': DetectedServer[];
}
