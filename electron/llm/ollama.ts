// Streaming chat over Ollama's own API, `POST /api/chat` (docs/api.md in ollama/ollama): one JSON
// object per line, the text under `message.content`, thinking under `message.thinking`, tool calls
// whole with their arguments as an object, and a last line with `done: true`, `done_reason` and the
// token counts. Unlike Ollama's `/v1` route it takes `options.num_ctx`: the server runs with the
// context Anima fitted the conversation into, instead of its own default (2,048 or 4,096 tokens),
// which would cut the start of the prompt — the self layer, the resident memory — without a word.
import { badResponseError, errorFromStream, notAStreamError, streamEndedError, streamFailure, type ErrorContext } from './errors.js';
import { fetchJson, httpSettings, keepHead, openBody, parseAddress, type HttpSettings } from './http.js';
import { isRecord, parseToolArguments, text, type JsonObject } from './json.js';
import { NdjsonParser } from './sse.js';
import {
  ProviderError,
  type ChatProvider,
  type ChatTurn,
  type ProviderOptions,
  type StreamEvent,
  type StreamRequest,
  type ToolCall,
  type Usage,
} from './types.js';

type FinishReason = Extract<StreamEvent, { type: 'done' }>['finishReason'];

/** How long Ollama keeps the model loaded after a request: a conversation's pauses should not unload it. */
export const OLLAMA_KEEP_ALIVE = '30m';

/**
 * Ollama loads a model on its first request and sends nothing until it is loaded: a large model
 * from a slow disk takes minutes. A model `/api/ps` does not list as loaded gets this long for the
 * first byte (and, the timer being one, between lines — Ollama streams steadily once loaded).
 */
export const OLLAMA_LOAD_TIMEOUT_MS = 5 * 60_000;

export const LOADING_SERVER_MODEL_TEXT = 'Loading the model on your server…';

/** Models seen loaded (server root + model → when), so a conversation's turns do not ask /api/ps each time. */
const seenLoaded = new Map<string, number>();
const SEEN_LOADED_FOR_MS = 10 * 60_000;

export function createOllamaProvider(options: ProviderOptions): ChatProvider {
  const settings = httpSettings(options);
  return {
    kind: 'ollama',
    stream: (request) => streamChat(settings, options, request),
    listModels: (signal) => listModels(settings, options, signal),
  };
}

/**
 * The server's root, from any address a person may paste: `http://localhost:11434`, the `/v1` of
 * its OpenAI route, `/api`, or an endpoint (`/api/chat`, `/v1/chat/completions`). A proxy's own
 * path prefix (`https://host/ollama`) is kept.
 */
export function ollamaBaseUrl(baseUrl: string): string {
  const url = parseAddress(baseUrl);
  const path = url.pathname.replace(/\/+$/, '').replace(/\/(v1(\/chat\/completions)?|api(\/(chat|generate|tags))?)$/, '');
  return `${url.origin}${path}`;
}

function headers(apiKey: string | undefined): Record<string, string> {
  return {
    'content-type': 'application/json',
    // Ollama itself needs no key; one behind an authenticating proxy (or ollama.com) does.
    ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
  };
}

async function* streamChat(settings: HttpSettings, options: ProviderOptions, request: StreamRequest): AsyncGenerator<StreamEvent> {
  let context: ErrorContext = { host: options.baseUrl, model: request.model, apiKey: options.apiKey };
  let textStreamed = false;
  try {
    const base = ollamaBaseUrl(options.baseUrl);
    context = { ...context, host: new URL(base).host };
    const loaded = await isLoaded(settings, options, base, request.model, request.signal);
    if (!loaded) yield { type: 'status', status: 'loading_server_model', text: LOADING_SERVER_MODEL_TEXT };
    const { body, head } = keepHead(
      await openBody(loaded ? settings : { ...settings, timeoutMs: Math.max(settings.timeoutMs, OLLAMA_LOAD_TIMEOUT_MS) }, {
        method: 'POST',
        url: `${base}/api/chat`,
        headers: headers(options.apiKey),
        body: requestBody(request, options.contextTokens),
        signal: request.signal,
        context,
      }),
    );
    const turn = new Turn(context);
    const parser = new NdjsonParser();
    let lines = 0;
    const read = async function* (): AsyncGenerator<string> {
      for await (const chunk of body) yield* parser.push(chunk);
      yield* parser.end();
    };
    for await (const line of read()) {
      const chunk = parseLine(line, lines++ === 0 ? head : undefined, context);
      for (const event of turn.apply(chunk)) {
        textStreamed ||= event.type === 'text';
        yield event;
      }
      if (turn.finished) break;
    }
    // A stream that just stops, without its `done: true` line, is a failure, not a short answer.
    if (!turn.finished) throw (lines === 0 && notAStreamError(head(), context)) || streamEndedError(context);
    seenLoaded.set(`${base} ${request.model}`, Date.now());
    yield* turn.end();
  } catch (error) {
    throw streamFailure(error, context, textStreamed);
  }
}

/**
 * Whether Ollama has the model loaded (`GET /api/ps`), asked quickly; a server that does not say
 * counts as loaded, so only a model known to be cold gets the long first wait.
 */
async function isLoaded(settings: HttpSettings, options: ProviderOptions, base: string, model: string, signal?: AbortSignal): Promise<boolean> {
  const key = `${base} ${model}`;
  if (Date.now() - (seenLoaded.get(key) ?? 0) < SEEN_LOADED_FOR_MS) return true;
  try {
    const ps = await fetchJson(
      { ...settings, maxRetries: 0, timeoutMs: Math.min(settings.timeoutMs, 2_000) },
      { method: 'GET', url: `${base}/api/ps`, headers: headers(options.apiKey), signal, context: { host: new URL(base).host, apiKey: options.apiKey } },
    );
    if (!Array.isArray(ps.models)) return true;
    const loaded = ps.models.some((m) => isRecord(m) && (m.name === model || m.model === model));
    if (loaded) seenLoaded.set(key, Date.now());
    return loaded;
  } catch (error) {
    if (error instanceof ProviderError && error.code === 'cancelled') throw error;
    return true;
  }
}

/** One line of the stream. A first line that is no JSON at all (a web page, plain words) is described from the body's head. */
function parseLine(line: string, head: (() => string) | undefined, context: ErrorContext): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    value = undefined;
  }
  if (isRecord(value)) return value;
  const notStream = head ? notAStreamError(head(), context) : undefined;
  throw notStream ?? new ProviderError('provider_bad_response', `The model server at ${context.host} sent a reply Anima couldn't read (it wasn't valid JSON).`);
}

function requestBody(request: StreamRequest, contextTokens: number | undefined): JsonObject {
  // Ollama has no tool_choice: "answer in text" is a request without tools. The history's calls
  // and results still render through the model's template.
  const tools = request.toolChoice === 'none' ? [] : (request.tools ?? []);
  const options: JsonObject = {
    ...(contextTokens !== undefined ? { num_ctx: contextTokens } : {}),
    ...(request.maxTokens !== undefined ? { num_predict: request.maxTokens } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.topP !== undefined ? { top_p: request.topP } : {}),
    ...(request.stop?.length ? { stop: request.stop } : {}),
  };
  return {
    model: request.model,
    messages: request.messages.map(toOllamaMessage),
    stream: true,
    keep_alive: OLLAMA_KEEP_ALIVE,
    options,
    ...(tools.length
      ? {
          tools: tools.map((tool) => ({
            type: 'function',
            function: { name: tool.name, description: tool.description, parameters: tool.parameters },
          })),
        }
      : {}),
    // Structured outputs: `format` takes the JSON Schema itself.
    ...(request.responseSchema ? { format: request.responseSchema.schema } : {}),
  };
}

function toOllamaMessage(turn: ChatTurn): JsonObject {
  switch (turn.role) {
    case 'system':
      return { role: 'system', content: turn.content };
    case 'user':
      // Ollama's messages have no `name`; the words carry who spoke. Images: base64, no data URL.
      return { role: 'user', content: turn.content, ...(turn.images?.length ? { images: turn.images.map((image) => image.data) } : {}) };
    case 'assistant': {
      const calls = turn.toolCalls ?? [];
      return {
        role: 'assistant',
        content: turn.content,
        ...(calls.length > 0
          ? { tool_calls: calls.map((call, index) => ({ id: call.id, function: { index, name: call.name, arguments: call.arguments } })) }
          : {}),
      };
    }
    case 'tool':
      // tool_name since the first tool support; tool_call_id in newer versions (older ones ignore it).
      return { role: 'tool', content: turn.content, tool_name: turn.name, tool_call_id: turn.toolCallId };
  }
}

/** The state of one streamed turn: tool calls come whole and are emitted at the end, with the one 'done'. */
class Turn {
  private doneReason?: string;
  private usage?: Usage;
  private readonly calls: ToolCall[] = [];

  constructor(private readonly context: ErrorContext) {}

  get finished(): boolean {
    return this.doneReason !== undefined;
  }

  *apply(chunk: JsonObject): Generator<StreamEvent> {
    // A failure after the stream started keeps HTTP 200 and arrives as its own line: {"error":"…"}.
    if (chunk.error !== undefined && chunk.error !== null) throw errorFromStream(chunk, this.context);
    const message = isRecord(chunk.message) ? chunk.message : {};
    const thinking = text(message.thinking);
    if (thinking) yield { type: 'reasoning', text: thinking };
    const content = text(message.content);
    if (content) yield { type: 'text', text: content };
    if (Array.isArray(message.tool_calls)) for (const call of message.tool_calls) this.addCall(call);
    if (chunk.done === true) {
      this.doneReason = text(chunk.done_reason) ?? 'stop';
      this.usage = {
        ...(typeof chunk.prompt_eval_count === 'number' ? { inputTokens: chunk.prompt_eval_count } : {}),
        ...(typeof chunk.eval_count === 'number' ? { outputTokens: chunk.eval_count } : {}),
      };
    }
  }

  *end(): Generator<StreamEvent> {
    for (const call of this.calls) yield { type: 'tool_call', call };
    // Ollama ends a turn of tool calls with done_reason "stop": the calls are what matter.
    const finishReason: FinishReason = this.calls.length > 0 ? 'tool_calls' : finishReasonOf(this.doneReason ?? 'stop');
    const usage = this.usage && Object.keys(this.usage).length > 0 ? this.usage : undefined;
    yield { type: 'done', finishReason, ...(usage ? { usage } : {}) };
  }

  private addCall(raw: unknown): void {
    if (!isRecord(raw)) return;
    const fn = isRecord(raw.function) ? raw.function : {};
    const name = text(fn.name);
    if (!name) throw badResponseError(this.context, 'a tool call without a tool name');
    // Older versions send no id; the tool result still needs one to point at.
    const id = text(raw.id) ?? `call_${this.calls.length}`;
    this.calls.push({ id, name, arguments: parseToolArguments(fn.arguments, name) });
  }
}

/** Ollama's done reasons: "stop", "length", and "load"/"unload" for requests that only (un)load a model. */
function finishReasonOf(reason: string): FinishReason {
  if (reason === 'stop') return 'stop';
  if (reason === 'length') return 'length';
  return 'other';
}

/** `GET /api/tags`: the models this Ollama has. */
async function listModels(settings: HttpSettings, options: ProviderOptions, signal?: AbortSignal): Promise<string[]> {
  const base = ollamaBaseUrl(options.baseUrl);
  const context: ErrorContext = { host: new URL(base).host, apiKey: options.apiKey };
  const body = await fetchJson(settings, { method: 'GET', url: `${base}/api/tags`, headers: headers(options.apiKey), signal, context });
  if (!Array.isArray(body.models)) throw badResponseError(context, 'the model list is missing');
  return body.models.flatMap((entry) => (isRecord(entry) && typeof entry.name === 'string' ? [entry.name] : []));
}
