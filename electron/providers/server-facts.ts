// Asking a model server what it really gives a model: its context window above all, since a
// server that runs with less than Anima budgets cuts the start of the prompt — the self layer, the
// resident memory — without a word. Each server says it in its own place:
//   Ollama     POST /api/show  model_info["<arch>.context_length"], capabilities, details.family
//              GET  /api/ps    context_length of a loaded model (what its /v1 route runs with)
//   llama.cpp  GET  /props     default_generation_settings.n_ctx (one slot's context)
//   LM Studio  GET  /api/v0/models  loaded_context_length of a loaded model;
//              GET  /api/v1/models  loaded_instances[].config.context_length
//   vLLM       GET  /v1/models  max_model_len
// Every question is quiet (a 404 or a refusal only means "not that server") and bounded in time.
import type { ProviderKind, ServerFacts, ServerSoftware } from '../../shared/api/providers.js';
import { ollamaBaseUrl, openAiBaseUrl } from '../llm/index.js';

export interface AskServerOptions {
  kind: ProviderKind;
  baseUrl: string;
  model: string;
  apiKey?: string;
  fetch?: typeof fetch;
  /** The longest all the questions together may take. */
  timeoutMs?: number;
}

/** Long enough for a local server on a busy machine, short enough not to hold up a save or a turn. */
export const ASK_SERVER_TIMEOUT_MS = 2500;

type Json = Record<string, unknown>;

const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const positive = (value: unknown): number | undefined => (typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined);

/**
 * What the server says about `model`; null when it could not be asked at all (unreachable, or a
 * kind that has nothing to ask). A server that answered without saying anything useful gives facts
 * whose fields are null, so it is not asked again at once.
 */
export async function askServer(options: AskServerOptions): Promise<ServerFacts | null> {
  if (options.kind !== 'ollama' && options.kind !== 'openai-compatible') return null;
  const signal = AbortSignal.timeout(options.timeoutMs ?? ASK_SERVER_TIMEOUT_MS);
  const ask = asker(options, signal);
  try {
    return options.kind === 'ollama' ? await askOllama(ask, ollamaBaseUrl(options.baseUrl), options.model) : await askOpenAiCompatible(ask, options);
  } catch {
    return null; // an address that does not parse: the connection test says what is wrong with it
  }
}

interface Answer {
  status: number;
  body: unknown;
}
type Ask = (url: string, body?: Json) => Promise<Answer | undefined>;

/** One quiet question: undefined when the server could not be reached, else its status and JSON (or undefined). */
function asker(options: AskServerOptions, signal: AbortSignal): Ask {
  const doFetch = options.fetch ?? globalThis.fetch;
  const headers = { 'content-type': 'application/json', ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) };
  return async (url, body) => {
    try {
      const response = await doFetch(url, { method: body ? 'POST' : 'GET', headers, body: body ? JSON.stringify(body) : undefined, signal });
      let parsed: unknown;
      try {
        parsed = response.ok ? await response.json() : undefined;
      } catch {
        parsed = undefined;
      }
      if (!response.ok) await response.body?.cancel().catch(() => undefined);
      return { status: response.status, body: parsed };
    } catch {
      return undefined;
    }
  };
}

function facts(software: ServerSoftware | null, contextTokens: number | undefined, extra: Partial<ServerFacts> = {}): ServerFacts {
  return { software, contextTokens: contextTokens ?? null, capabilities: null, family: null, checkedAt: new Date().toISOString(), ...extra };
}

/** /api/show: the model's own context length, its capabilities and family. */
async function askOllama(ask: Ask, base: string, model: string): Promise<ServerFacts | null> {
  if (!model) return null;
  const answer = await ask(`${base}/api/show`, { model });
  if (!answer) return null;
  return showFacts(answer.body) ?? facts('ollama', undefined);
}

function showFacts(body: unknown): ServerFacts | undefined {
  if (!isRecord(body) || !isRecord(body.model_info)) return undefined;
  const info = body.model_info;
  const arch = typeof info['general.architecture'] === 'string' ? info['general.architecture'] : undefined;
  const details = isRecord(body.details) ? body.details : {};
  const capabilities = Array.isArray(body.capabilities) ? body.capabilities.filter((c): c is string => typeof c === 'string') : null;
  return facts('ollama', arch ? positive(info[`${arch}.context_length`]) : undefined, {
    capabilities,
    family: typeof details.family === 'string' && details.family ? details.family : (arch ?? null),
  });
}

/** Every OpenAI-compatible server is asked the questions of each kind at once; the first that answers in its own shape says. */
async function askOpenAiCompatible(ask: Ask, options: AskServerOptions): Promise<ServerFacts | null> {
  const base = openAiBaseUrl(options.baseUrl);
  const origin = new URL(base).origin;
  const model = options.model;
  const [version, props, lmV0, lmV1, models] = await Promise.all([
    ask(`${origin}/api/version`),
    ask(`${origin}/props`),
    ask(`${origin}/api/v0/models`),
    ask(`${origin}/api/v1/models`),
    ask(`${base}/models`),
  ]);
  if (!version && !props && !lmV0 && !lmV1 && !models) return null;

  // Ollama behind its /v1 route: the window is that of the loaded runner, if it is loaded.
  if (isRecord(version?.body) && typeof version.body.version === 'string') {
    const [show, ps] = await Promise.all([model ? ask(`${origin}/api/show`, { model }) : undefined, ask(`${origin}/api/ps`)]);
    const loaded =
      isRecord(ps?.body) && Array.isArray(ps.body.models) ? ps.body.models.find((m) => isRecord(m) && (m.name === model || m.model === model)) : undefined;
    const shown = showFacts(show?.body);
    return facts('ollama', isRecord(loaded) ? positive(loaded.context_length) : undefined, {
      capabilities: shown?.capabilities ?? null,
      family: shown?.family ?? null,
    });
  }
  if (isRecord(props?.body)) {
    const settings = isRecord(props.body.default_generation_settings) ? props.body.default_generation_settings : {};
    const nCtx = positive(settings.n_ctx) ?? positive(props.body.n_ctx);
    if (nCtx !== undefined || 'default_generation_settings' in props.body) return facts('llama.cpp', nCtx);
  }
  const lmStudio = lmStudioContext(lmV0?.body, lmV1?.body, model);
  if (lmStudio) return facts('lm-studio', lmStudio.contextTokens);
  if (isRecord(models?.body) && Array.isArray(models.body.data)) {
    const card = models.body.data.find((m) => isRecord(m) && m.id === model);
    const maxModelLen = isRecord(card) ? positive(card.max_model_len) : undefined;
    if (maxModelLen !== undefined) return facts('vllm', maxModelLen);
  }
  return facts(null, undefined);
}

/**
 * LM Studio's listings: the context a loaded model runs with. A model not loaded yet is loaded on
 * the first request with LM Studio's own default, which the listing does not say: unknown.
 */
function lmStudioContext(v0: unknown, v1: unknown, model: string): { contextTokens: number | undefined } | undefined {
  let seen = false;
  let contextTokens: number | undefined;
  if (isRecord(v0) && Array.isArray(v0.data) && v0.data.some((m) => isRecord(m) && typeof m.state === 'string')) {
    seen = true;
    const entry = v0.data.find((m) => isRecord(m) && m.id === model);
    if (isRecord(entry) && entry.state === 'loaded') contextTokens = positive(entry.loaded_context_length);
  }
  if (isRecord(v1) && Array.isArray(v1.models)) {
    seen = true;
    const entry = v1.models.find((m) => isRecord(m) && m.key === model);
    const instance = isRecord(entry) && Array.isArray(entry.loaded_instances) ? entry.loaded_instances.find(isRecord) : undefined;
    contextTokens ??= isRecord(instance) && isRecord(instance.config) ? positive(instance.config.context_length) : undefined;
  }
  return seen ? { contextTokens } : undefined;
}
