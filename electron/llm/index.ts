// The model providers behind one interface: pick one by kind.
import { createAnthropicProvider } from './anthropic.js';
import { boundedProvider, DEFAULT_DEADLINE_MS, DEFAULT_MAX_REPLY_CHARS, LOCAL_DEADLINE_MS } from './bounds.js';
import { createLocalProvider } from './local.js';
import { createOllamaProvider, OLLAMA_LOAD_TIMEOUT_MS } from './ollama.js';
import { createOpenAiCompatibleProvider } from './openai-compatible.js';
import type { ChatProvider, ProviderOptions } from './types.js';

export * from './types.js';
export { createAnthropicProvider, anthropicBaseUrl } from './anthropic.js';
export { createLocalProvider } from './local.js';
export { createOllamaProvider, ollamaBaseUrl, OLLAMA_KEEP_ALIVE } from './ollama.js';
export { createOpenAiCompatibleProvider, openAiBaseUrl } from './openai-compatible.js';

/** The client for a connection: its wire protocol, with every reply bounded and made storable. */
export function createProvider(options: ProviderOptions): ChatProvider {
  return boundedProvider(protocolClient(options), {
    // Twice the HTTP layer's timeout: silence is reported there first, in its words; this is for keep-alives.
    // Ollama may take minutes to load a model before its first line (its client waits that long).
    idleMs: 2 * (options.kind === 'ollama' ? Math.max(options.timeoutMs ?? 60_000, OLLAMA_LOAD_TIMEOUT_MS) : (options.timeoutMs ?? 60_000)),
    deadlineMs: options.replyDeadlineMs ?? (options.kind === 'local' ? LOCAL_DEADLINE_MS : DEFAULT_DEADLINE_MS),
    maxChars: options.maxReplyChars ?? DEFAULT_MAX_REPLY_CHARS,
  });
}

function protocolClient(options: ProviderOptions): ChatProvider {
  switch (options.kind) {
    case 'openai-compatible':
      return createOpenAiCompatibleProvider(options);
    case 'anthropic':
      return createAnthropicProvider(options);
    case 'local':
      return createLocalProvider(options);
    case 'ollama':
      return createOllamaProvider(options);
  }
}
