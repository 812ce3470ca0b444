// Model connections (providers): their kinds, a saved one as the UI sees it, testing one, finding
// servers on this computer, and the providers.* methods.
import { z } from 'zod';
import type { ErrorCode } from './errors.js';
import { empty, id } from './fields.js';

export const PROVIDER_KINDS = ['openai-compatible', 'anthropic', 'local'] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

export interface ProviderConfig {
  id: string;
  kind: ProviderKind;
  name: string;
  baseUrl: string;
  model: string;
  /** The model's context window in tokens; history beyond it is trimmed, oldest first. */
  contextTokens: number;
  hasApiKey: boolean;
}

export interface ConnectionTestResult {
  ok: boolean;
  message: string;
  code?: ErrorCode;
  models: string[];
  latencyMs: number;
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
