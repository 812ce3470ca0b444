// The model providers behind one interface: pick one by kind.
import { createAnthropicProvider } from './anthropic.js';
import { createLocalProvider } from './local.js';
import { createOpenAiCompatibleProvider } from './openai-compatible.js';
import type { ChatProvider, ProviderOptions } from './types.js';

export * from './types.js';
export { createAnthropicProvider, anthropicBaseUrl } from './anthropic.js';
export { createLocalProvider } from './local.js';
export { createOpenAiCompatibleProvider, openAiBaseUrl } from './openai-compatible.js';

export function createProvider(options: ProviderOptions): ChatProvider {
  switch (options.kind) {
    case 'openai-compatible':
      return createOpenAiCompatibleProvider(options);
    case 'anthropic':
      return createAnthropicProvider(options);
    case 'local':
      return createLocalProvider(options);
  }
}
