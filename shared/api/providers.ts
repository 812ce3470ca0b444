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
