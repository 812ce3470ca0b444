import type { ProviderKind } from '../../shared/api.js';

export const PRESETS: Record<'ollama' | 'lmstudio' | 'openai', { name: string; baseUrl: string; kind: ProviderKind }> = {
  // Ollama through its own API, which can be told the context to run with (its /v1 route cannot).
  ollama: { name: 'Ollama', baseUrl: 'http://127.0.0.1:11434', kind: 'ollama' },
  lmstudio: { name: 'LM Studio', baseUrl: 'http://127.0.0.1:1234/v1', kind: 'openai-compatible' },
  openai: { name: 'OpenAI', baseUrl: 'https://api.openai.com/v1', kind: 'openai-compatible' },
};
export type PresetKey = keyof typeof PRESETS;

export const DEFAULT_BASE_URL: Record<ProviderKind, string> = {
  // Most people who pick "OpenAI-compatible" without thinking further are running Ollama.
  'openai-compatible': 'http://127.0.0.1:11434/v1',
  anthropic: 'https://api.anthropic.com',
  local: '',
  ollama: PRESETS.ollama.baseUrl,
};

const CLOUD = /api\.openai\.com|api\.anthropic\.com/;

/** Local servers do not need a key; cloud ones do. */
export function looksLocal(baseUrl: string): boolean {
  return /^https?:\/\/(127\.0\.0\.1|localhost|\[::1\])(:|\/|$)/i.test(baseUrl.trim()) && !CLOUD.test(baseUrl);
}

/** A readable name when the person leaves it empty. */
export function suggestName(kind: ProviderKind, baseUrl: string, kindLabel: string): string {
  const url = baseUrl.trim();
  for (const preset of Object.values(PRESETS)) if (url.replace(/\/+$/, '') === preset.baseUrl) return preset.name;
  if (kind === 'anthropic') return 'Anthropic';
  if (/:11434\b/.test(url)) return PRESETS.ollama.name;
  if (/:1234\b/.test(url)) return PRESETS.lmstudio.name;
  try {
    return url ? new URL(url).host : kindLabel;
  } catch {
    return kindLabel;
  }
}

export function sameServer(a: string, b: string): boolean {
  const norm = (u: string) => u.trim().replace(/\/+$/, '').replace('://localhost', '://127.0.0.1').toLowerCase();
  return norm(a) === norm(b);
}
