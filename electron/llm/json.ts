// Small helpers for reading untyped JSON from model servers, which vary in every field.
import { ProviderError } from './types.js';

export type JsonObject = Record<string, unknown>;

export function isRecord(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A non-empty string, or undefined: servers send "", null and missing interchangeably. */
export function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Parses one JSON payload from a stream or body; anything else is a server we cannot understand. */
export function parseJsonObject(raw: string, host: string): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    value = undefined;
  }
  if (!isRecord(value)) {
    throw new ProviderError('provider_bad_response', `The model server at ${host} sent a reply Anima couldn't read (it wasn't valid JSON).`);
  }
  return value;
}

/**
 * Tool arguments arrive as a JSON string (OpenAI, Anthropic's concatenated partial_json) or as an
 * object (Ollama native). Nothing or "" means a tool called without arguments.
 */
export function parseToolArguments(raw: unknown, toolName: string): JsonObject {
  if (isRecord(raw)) return raw;
  if (raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === '')) return {};
  if (typeof raw === 'string') {
    try {
      const value: unknown = JSON.parse(raw);
      if (isRecord(value)) return value;
      if (value === null) return {};
    } catch {
      // fall through to the error below
    }
  }
  throw new ProviderError('provider_bad_response', `The model tried to use the tool "${toolName}" but sent arguments that aren't valid JSON.`);
}
