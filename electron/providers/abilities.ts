// What a connection's model can do for Anima, in one place: chat; tools (so it can save and recall
// memories itself); structured answers (a JSON Schema honoured, so the night's answers can be read);
// embeddings; images. The sources, strongest last:
//   1. what is known of the kind of connection: Anthropic and OpenAI's own API call tools and honour a
//      schema (a forced tool call; response_format json_schema); the on-device model does neither;
//      llama.cpp, LM Studio, vLLM and Ollama constrain answers to a schema;
//   2. the server's own answer: Ollama's /api/show capabilities (completion, tools, vision, embedding);
//   3. a refusal seen: a server that refused a JSON Schema for this address and model gives no
//      structured answers, whatever else says so.
// Nothing here asks the model anything: what neither the server nor the kind says is 'unknown'.
import type { Ability, ProviderAbilities, ProviderConfig } from '../../shared/api/providers.js';

const UNKNOWN: ProviderAbilities = { chat: 'unknown', tools: 'unknown', structured: 'unknown', embeddings: 'unknown', images: 'unknown' };

/** OpenAI's own API (not a server that merely speaks its protocol). */
function isOpenAiCloud(baseUrl: string): boolean {
  try {
    return new URL(baseUrl).hostname.toLowerCase() === 'api.openai.com';
  } catch {
    return false;
  }
}

/** What is known of this kind of connection without asking its server. */
function known(config: Pick<ProviderConfig, 'kind' | 'baseUrl' | 'server'>): ProviderAbilities {
  switch (config.kind) {
    case 'local':
      // transformers.js: the model answers in text; tools and schemas are not given to it.
      return { chat: 'yes', tools: 'no', structured: 'no', embeddings: 'no', images: 'no' };
    case 'anthropic':
      // Messages API: tools, and a schema as a forced tool call; no embeddings endpoint.
      return { ...UNKNOWN, chat: 'yes', tools: 'yes', structured: 'yes', embeddings: 'no' };
    case 'ollama':
      // `format: <schema>` constrains any model that generates text.
      return { ...UNKNOWN, structured: 'yes' };
    case 'openai-compatible':
      if (isOpenAiCloud(config.baseUrl)) return { ...UNKNOWN, chat: 'yes', tools: 'yes', structured: 'yes' };
      // Each of these servers takes response_format json_schema.
      return config.server?.software ? { ...UNKNOWN, structured: 'yes' } : { ...UNKNOWN };
  }
}

/**
 * The connection's abilities. `schemaRefused`: its server refused a JSON Schema for its current
 * address and model (`Providers.schemaRefusal`).
 */
export function providerAbilities(config: Pick<ProviderConfig, 'kind' | 'baseUrl' | 'server'>, schemaRefused: boolean): ProviderAbilities {
  const abilities = known(config);
  const capabilities = config.server?.software === 'ollama' ? config.server.capabilities : null;
  if (capabilities) {
    const has = (word: string): Ability => (capabilities.includes(word) ? 'yes' : 'no');
    abilities.chat = has('completion');
    abilities.tools = has('tools');
    abilities.structured = has('completion'); // a model that only embeds gives no answers at all
    abilities.embeddings = has('embedding');
    abilities.images = has('vision');
  }
  if (schemaRefused) abilities.structured = 'no';
  return abilities;
}
