// Streaming chat over the OpenAI `/chat/completions` protocol, as spoken by OpenAI and by local
// servers (Ollama, llama.cpp, vLLM, LM Studio). Each of them bends the protocol a little; the
// quirks handled here are the ones in the wire captures (shared/fixtures/llm-wire/README.md).
import { badResponseError, errorFromEvent, errorFromStream, notAStreamError, streamEndedError, streamFailure, type ErrorContext } from './errors.js';
import { fetchJson, httpSettings, keepHead, openBody, parseAddress, type HttpSettings } from './http.js';
import { isRecord, parseJsonObject, parseToolArguments, text, type JsonObject } from './json.js';
import { parseSse } from './sse.js';
import { ProviderError, type ChatProvider, type ChatTurn, type ProviderOptions, type StreamEvent, type StreamRequest, type Usage } from './types.js';

type FinishReason = Extract<StreamEvent, { type: 'done' }>['finishReason'];

export function createOpenAiCompatibleProvider(options: ProviderOptions): ChatProvider {
  const settings = httpSettings(options);
  return {
    kind: 'openai-compatible',
    stream: (request) => streamChat(settings, options, request),
    listModels: (signal) => listModels(settings, options, signal),
  };
}

/**
 * People paste server addresses in several forms. An address with no path
 * (`http://127.0.0.1:11434`) gets `/v1`, where Ollama, llama.cpp, vLLM, LM Studio and OpenAI all
 * serve this API. Any other path is kept as given (OpenRouter's `/api/v1`, Groq's `/openai/v1`),
 * except that a pasted `…/chat/completions` endpoint is trimmed back to its base.
 */
export function openAiBaseUrl(baseUrl: string): string {
  const url = parseAddress(baseUrl);
  const path = url.pathname.replace(/\/+$/, '').replace(/\/chat\/completions$/, '');
  return `${url.origin}${path || '/v1'}`;
}

function headers(apiKey: string | undefined): Record<string, string> {
  return {
    'content-type': 'application/json',
    ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
  };
}

async function* streamChat(settings: HttpSettings, options: ProviderOptions, request: StreamRequest): AsyncGenerator<StreamEvent> {
  let context: ErrorContext = { host: options.baseUrl, model: request.model, apiKey: options.apiKey };
  let textStreamed = false;
  try {
    const base = openAiBaseUrl(options.baseUrl);
    context = { ...context, host: new URL(base).host };
    const open = (limit: LimitField) =>
      openBody(settings, {
        method: 'POST',
        url: `${base}/chat/completions`,
        headers: headers(options.apiKey),
        body: requestBody(request, limit),
        signal: request.signal,
        context,
      });
    const connection = `${base}\n${request.model}`;
    const limit = limitField(base, request.model);
    let opened: Awaited<ReturnType<typeof open>>;
    try {
      opened = await open(limit);
    } catch (error) {
      // A server that names max_tokens as unsupported is asked once more the new way, and from now on.
      if (limit !== 'max_tokens' || request.maxTokens === undefined || !refusesMaxTokens(error)) throw error;
      completionTokensAt.add(connection);
      opened = await open('max_completion_tokens');
    }
    const { body, head } = keepHead(opened);
    const turn = new Turn(context);
    let sawDone = false;
    let events = 0;
    for await (const sse of parseSse(body)) {
      events++;
      if (sse.data === '[DONE]') {
        sawDone = true;
        break;
      }
      if (sse.event === 'error') throw errorFromEvent(sse.data, context);
      for (const event of turn.apply(parseJsonObject(sse.data, context.host))) {
        textStreamed ||= event.type === 'text';
        yield event;
      }
    }
    // A stream that just stops is a failure, not a short answer. But a finish_reason means the
    // model finished: llama.cpp's tool-call capture ends right after its finish chunk, and what
    // follows (the usage chunk, [DONE]) adds nothing we cannot do without.
    if (!sawDone && !turn.finished) throw (events === 0 && notAStreamError(head(), context)) || streamEndedError(context);
    yield* turn.end();
  } catch (error) {
    throw streamFailure(error, context, textStreamed);
  }
}

type LimitField = 'max_tokens' | 'max_completion_tokens';

/** Connections (base URL and model) whose server refused `max_tokens`: asked with `max_completion_tokens` since. In memory. */
const completionTokensAt = new Set<string>();

/**
 * OpenAI's reasoning models reject `max_tokens` ("deprecated in favor of max_completion_tokens, and
 * is not compatible with o-series models"; GPT-5 the same): o1, o3, o4-mini and the gpt-5 family, on
 * api.openai.com and Azure OpenAI, get `max_completion_tokens`. Other servers keep the field every
 * one of them reads, unless one already refused it.
 */
export function limitField(base: string, model: string): LimitField {
  if (completionTokensAt.has(`${base}\n${model}`)) return 'max_completion_tokens';
  const host = new URL(base).hostname;
  const openAi = host === 'api.openai.com' || host.endsWith('.openai.azure.com');
  return openAi && REASONING_MODEL.test(model) ? 'max_completion_tokens' : 'max_tokens';
}
const REASONING_MODEL = /^(?:openai\/)?(?:o\d|gpt-5)/i;

/**
 * OpenAI's refusal, 400 `{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported
 * with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":
 * "max_tokens","code":"unsupported_parameter"}}` (Azure and proxies repeat it).
 */
function refusesMaxTokens(error: unknown): boolean {
  return (
    error instanceof ProviderError &&
    error.status === 400 &&
    /\bmax_tokens\b/.test(error.message) &&
    /max_completion_tokens|unsupported|not supported/i.test(error.message)
  );
}

function requestBody(request: StreamRequest, limit: LimitField): JsonObject {
  return {
    model: request.model,
    messages: request.messages.map(toOpenAiMessage),
    stream: true,
    // Without this OpenAI sends no token counts; servers that do not know it ignore it.
    stream_options: { include_usage: true },
    ...(request.tools?.length
      ? {
          tools: request.tools.map((tool) => ({
            type: 'function',
            function: { name: tool.name, description: tool.description, parameters: tool.parameters },
          })),
          ...(request.toolChoice === 'none' ? { tool_choice: 'none' } : {}),
        }
      : {}),
    ...(request.maxTokens !== undefined ? { [limit]: request.maxTokens } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.topP !== undefined ? { top_p: request.topP } : {}),
    ...(request.stop?.length ? { stop: request.stop } : {}),
    ...(request.responseSchema ? { response_format: responseFormat(request.responseSchema) } : {}),
  };
}

/**
 * A background answer's JSON Schema, in the shape OpenAI defines for structured outputs and vLLM,
 * llama.cpp's server and LM Studio accept alike: `{type: "json_schema", json_schema: {name, schema,
 * strict}}`. `strict` matters to OpenAI only (the others constrain decoding to the schema anyway).
 */
function responseFormat(format: NonNullable<StreamRequest['responseSchema']>): JsonObject {
  return { type: 'json_schema', json_schema: { name: format.name, schema: format.schema, strict: format.strict ?? false } };
}

function toOpenAiMessage(turn: ChatTurn): JsonObject {
  switch (turn.role) {
    case 'system':
      return { role: 'system', content: turn.content };
    case 'user':
      return { role: 'user', content: openAiUserContent(turn), ...(turn.name ? { name: turn.name } : {}) };
    case 'assistant': {
      const calls = turn.toolCalls ?? [];
      return {
        role: 'assistant',
        // OpenAI wants null, not "", beside tool calls.
        content: calls.length > 0 && turn.content === '' ? null : turn.content,
        ...(turn.name ? { name: turn.name } : {}),
        ...(calls.length > 0
          ? {
              tool_calls: calls.map((call) => ({
                id: call.id,
                type: 'function',
                function: { name: call.name, arguments: JSON.stringify(call.arguments) },
              })),
            }
          : {}),
      };
    }
    case 'tool':
      return { role: 'tool', tool_call_id: turn.toolCallId, content: turn.content };
  }
}

/**
 * A person's words, or with images the content parts OpenAI defines and the servers speaking its
 * protocol (Ollama's /v1, llama.cpp, vLLM, LM Studio) read: the text part, then each image as an
 * `image_url` holding a data URL.
 */
function openAiUserContent(turn: Extract<ChatTurn, { role: 'user' }>): string | JsonObject[] {
  if (!turn.images?.length) return turn.content;
  return [
    ...(turn.content ? [{ type: 'text', text: turn.content }] : []),
    ...turn.images.map((image) => ({ type: 'image_url', image_url: { url: `data:${image.type};base64,${image.data}` } })),
  ];
}

interface PendingCall {
  id?: string;
  name?: string;
  /** Concatenated `arguments` string fragments. */
  args: string;
  /** Set instead when a server sends the arguments as an object (Ollama native style). */
  argsObject?: JsonObject;
}

/** The state of one streamed turn: tool calls assemble across chunks and are emitted at the end. */
class Turn {
  private finishReason?: FinishReason;
  private usage?: Usage;
  private readonly calls: PendingCall[] = [];
  private readonly byIndex = new Map<number, PendingCall>();

  constructor(private readonly context: ErrorContext) {}

  get finished(): boolean {
    return this.finishReason !== undefined;
  }

  *apply(chunk: JsonObject): Generator<StreamEvent> {
    // Mid-stream failures keep HTTP 200: `{"error":…}` (llama.cpp since #16109, OpenRouter, Ollama), `{"object":"error",…}` (vLLM).
    if ((chunk.error !== undefined && chunk.error !== null) || chunk.object === 'error') {
      throw errorFromStream(chunk, this.context);
    }
    this.readUsage(chunk);
    // Usage-only chunks carry `choices: []`; one conversation means one choice.
    const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
    if (!isRecord(choice)) return;
    const delta = isRecord(choice.delta) ? choice.delta : {};

    // llama.cpp and DeepSeek say reasoning_content; Ollama and OpenRouter say reasoning.
    const reasoning = text(delta.reasoning_content) ?? text(delta.reasoning);
    if (reasoning) yield { type: 'reasoning', text: reasoning };
    const content = text(delta.content) ?? text(delta.refusal);
    if (content) yield { type: 'text', text: content };
    if (Array.isArray(delta.tool_calls)) for (const fragment of delta.tool_calls) this.addFragment(fragment);

    const reason = text(choice.finish_reason);
    if (reason) this.finishReason = finishReasonOf(reason);
  }

  /** Emits the assembled tool calls and the one 'done' event. */
  *end(): Generator<StreamEvent> {
    for (const [position, call] of this.calls.entries()) {
      if (!call.name) throw badResponseError(this.context, 'a tool call without a tool name');
      yield {
        type: 'tool_call',
        call: {
          id: call.id ?? `call_${position}`, // servers without ids still need tool results to point somewhere
          name: call.name,
          arguments: call.argsObject ?? parseToolArguments(call.args, call.name),
        },
      };
    }
    // Ollama has been seen ending tool calls with finish_reason "stop"; the calls are what matter.
    const finishReason = this.calls.length > 0 ? 'tool_calls' : (this.finishReason ?? 'stop');
    yield { type: 'done', finishReason, ...(this.usage ? { usage: this.usage } : {}) };
  }

  private addFragment(fragment: unknown): void {
    if (!isRecord(fragment)) return;
    const fn = isRecord(fragment.function) ? fragment.function : {};
    const call = this.callFor(typeof fragment.index === 'number' ? fragment.index : undefined, text(fragment.id));
    // id and name come with a call's first fragment only; later ones carry argument slices.
    call.id ??= text(fragment.id);
    call.name ??= text(fn.name);
    if (typeof fn.arguments === 'string') call.args += fn.arguments;
    else if (isRecord(fn.arguments)) call.argsObject = fn.arguments;
  }

  /**
   * Fragments are keyed by `index`. Mistral sends no index (each call whole, with its id), and
   * Ollama has been seen sending every call as index 0: so a fragment with a new id starts a new
   * call, and one with no index continues the latest call.
   */
  private callFor(index: number | undefined, id: string | undefined): PendingCall {
    const known = index === undefined ? this.calls.at(-1) : this.byIndex.get(index);
    if (known && (id === undefined || known.id === undefined || known.id === id)) return known;
    const call: PendingCall = { args: '' };
    this.calls.push(call);
    if (index !== undefined) this.byIndex.set(index, call);
    return call;
  }

  /** Usage may come in its own `choices: []` chunk, on the finish chunk, or under Groq's x_groq. */
  private readUsage(chunk: JsonObject): void {
    const groq = isRecord(chunk.x_groq) ? chunk.x_groq.usage : undefined;
    const raw = isRecord(chunk.usage) ? chunk.usage : isRecord(groq) ? groq : undefined;
    if (!raw) return;
    this.usage = {
      ...(typeof raw.prompt_tokens === 'number' ? { inputTokens: raw.prompt_tokens } : {}),
      ...(typeof raw.completion_tokens === 'number' ? { outputTokens: raw.completion_tokens } : {}),
    };
  }
}

function finishReasonOf(reason: string): FinishReason {
  if (reason === 'stop') return 'stop';
  if (reason === 'length') return 'length';
  if (reason === 'tool_calls' || reason === 'function_call') return 'tool_calls';
  return 'other';
}

/** `GET /models`; Ollama versions without the OpenAI API still answer its native `/api/tags`. */
async function listModels(settings: HttpSettings, options: ProviderOptions, signal?: AbortSignal): Promise<string[]> {
  const base = openAiBaseUrl(options.baseUrl);
  const context: ErrorContext = { host: new URL(base).host, apiKey: options.apiKey };
  const request = { method: 'GET' as const, headers: headers(options.apiKey), signal, context };
  try {
    const body = await fetchJson(settings, { ...request, url: `${base}/models` });
    return namesOf(body.data, 'id', context);
  } catch (error) {
    // Waiting a second time, or asking again after a Stop, helps no one.
    if (error instanceof ProviderError && (error.code === 'cancelled' || error.code === 'provider_timeout')) throw error;
    try {
      const tags = await fetchJson(settings, { ...request, url: `${new URL(base).origin}/api/tags` });
      return namesOf(tags.models, 'name', context);
    } catch {
      throw error; // the OpenAI endpoint's failure is the one that explains what is wrong
    }
  }
}

function namesOf(list: unknown, key: 'id' | 'name', context: ErrorContext): string[] {
  if (!Array.isArray(list)) throw badResponseError(context, 'the model list is missing');
  return list.flatMap((entry) => (isRecord(entry) && typeof entry[key] === 'string' ? [entry[key]] : []));
}
