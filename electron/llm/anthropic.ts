// Streaming chat over Anthropic's Messages API (`POST /v1/messages`).
import { badResponseError, errorFromEvent, errorFromStream, notAStreamError, streamEndedError, streamFailure, type ErrorContext } from './errors.js';
import { fetchJson, httpSettings, keepHead, openBody, parseAddress, type HttpSettings } from './http.js';
import { isRecord, parseJsonObject, parseToolArguments, text, type JsonObject } from './json.js';
import { parseSse } from './sse.js';
import type { ChatProvider, ChatTurn, ProviderOptions, StreamEvent, StreamRequest, Usage } from './types.js';

type FinishReason = Extract<StreamEvent, { type: 'done' }>['finishReason'];

const API_VERSION = '2023-06-01';
/** The API requires max_tokens; this is ample for a chat reply when the caller sets none. */
const DEFAULT_MAX_TOKENS = 4096;

export function createAnthropicProvider(options: ProviderOptions): ChatProvider {
  const settings = httpSettings(options);
  return {
    kind: 'anthropic',
    stream: (request) => streamMessages(settings, options, request),
    listModels: (signal) => listModels(settings, options, signal),
  };
}

/**
 * The API lives under `/v1`. People paste `https://api.anthropic.com`, `…/v1` or even
 * `…/v1/messages`; all three mean the same base.
 */
export function anthropicBaseUrl(baseUrl: string): string {
  const url = parseAddress(baseUrl);
  const path = url.pathname
    .replace(/\/+$/, '')
    .replace(/\/messages$/, '')
    .replace(/\/v1$/, '');
  return `${url.origin}${path}/v1`;
}

function headers(apiKey: string | undefined): Record<string, string> {
  return {
    'content-type': 'application/json',
    'anthropic-version': API_VERSION,
    ...(apiKey ? { 'x-api-key': apiKey } : {}),
  };
}

async function* streamMessages(settings: HttpSettings, options: ProviderOptions, request: StreamRequest): AsyncGenerator<StreamEvent> {
  let context: ErrorContext = { host: options.baseUrl, model: request.model, apiKey: options.apiKey };
  let textStreamed = false;
  try {
    const base = anthropicBaseUrl(options.baseUrl);
    context = { ...context, host: new URL(base).host };
    const { body, head } = keepHead(
      await openBody(settings, {
        method: 'POST',
        url: `${base}/messages`,
        headers: headers(options.apiKey),
        body: requestBody(request),
        signal: request.signal,
        context,
      }),
    );
    const turn = new Turn(context, request.responseSchema?.name);
    let events = 0;
    for await (const sse of parseSse(body)) {
      events++;
      if (sse.event === 'error') throw errorFromEvent(sse.data, context);
      for (const event of turn.apply(parseJsonObject(sse.data, context.host))) {
        textStreamed ||= event.type === 'text';
        yield event;
      }
      if (turn.stopped) break;
    }
    // Anthropic sends no [DONE]: message_stop is the only proof that the reply is whole.
    if (!turn.stopped) throw (events === 0 && notAStreamError(head(), context)) || streamEndedError(context);
    yield* turn.end();
  } catch (error) {
    throw streamFailure(error, context, textStreamed);
  }
}

/**
 * The Messages API has no response format: a background answer's JSON Schema becomes one tool whose
 * input is the answer, and `tool_choice` forces the model to call it (Anthropic's documented way to
 * get JSON of a given shape). Its input then streams back as the answer's text (Turn).
 */
const ANSWER_TOOL_DESCRIPTION = 'Give your answer: the input is the whole answer, in the shape the instructions describe.';

function requestBody(request: StreamRequest): JsonObject {
  const system = request.messages.flatMap((turn) => (turn.role === 'system' ? [turn.content] : []));
  const answer = request.responseSchema;
  const tools = [
    ...(request.tools ?? []).map((tool) => ({ name: tool.name, description: tool.description, input_schema: tool.parameters })),
    ...(answer ? [{ name: answer.name, description: ANSWER_TOOL_DESCRIPTION, input_schema: answer.schema }] : []),
  ];
  const toolChoice = answer ? { type: 'tool', name: answer.name } : request.toolChoice === 'none' && tools.length ? { type: 'none' } : undefined;
  return {
    model: request.model,
    max_tokens: request.maxTokens ?? DEFAULT_MAX_TOKENS,
    stream: true,
    ...(system.length > 0 ? { system: system.join('\n\n') } : {}),
    messages: toAnthropicMessages(request.messages),
    ...(tools.length ? { tools } : {}),
    ...(toolChoice ? { tool_choice: toolChoice } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.topP !== undefined ? { top_p: request.topP } : {}),
    ...(request.stop?.length ? { stop_sequences: request.stop } : {}),
  };
}

/**
 * Anthropic has no system or tool roles: the system prompt is a top-level field and tool results
 * are blocks in a user message. Consecutive turns of one role are merged into one message, since
 * the API wants user and assistant to alternate (an assistant's tool calls are followed by one
 * user message holding all their results).
 */
function toAnthropicMessages(turns: ChatTurn[]): JsonObject[] {
  const messages: { role: 'user' | 'assistant'; content: JsonObject[] }[] = [];
  for (const turn of turns) {
    if (turn.role === 'system') continue;
    const role = turn.role === 'assistant' ? 'assistant' : 'user';
    const blocks: JsonObject[] = [];
    if (turn.role === 'tool') {
      blocks.push({ type: 'tool_result', tool_use_id: turn.toolCallId, content: turn.content });
    } else {
      // Images first, then the words about them (Anthropic's advice); each a base64 image block.
      if (turn.role === 'user') {
        for (const image of turn.images ?? []) blocks.push({ type: 'image', source: { type: 'base64', media_type: image.type, data: image.data } });
      }
      // The API rejects empty text blocks; an assistant turn that only called tools has none.
      if (turn.content !== '') blocks.push({ type: 'text', text: turn.content });
      if (turn.role === 'assistant') {
        for (const call of turn.toolCalls ?? []) {
          blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: call.arguments });
        }
      }
    }
    if (blocks.length === 0) continue;
    const last = messages.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  }
  return messages;
}

interface ToolBlock {
  id: string;
  name: string;
  /** Concatenated partial_json fragments. */
  json: string;
  input: unknown;
  /** The forced answer tool's call: its input is streamed as the answer's text, not reported as a tool call. */
  answer: boolean;
}

/** The state of one streamed message. */
class Turn {
  stopped = false;
  private stopReason?: string;
  private usage: Usage = {};
  private readonly toolBlocks = new Map<number, ToolBlock>();
  private answered = false;

  constructor(
    private readonly context: ErrorContext,
    /** The forced answer tool's name, when the request asked for a structured answer. */
    private readonly answerTool?: string,
  ) {}

  *apply(payload: JsonObject): Generator<StreamEvent> {
    const index = typeof payload.index === 'number' ? payload.index : -1;
    switch (payload.type) {
      case 'message_start': {
        const message = isRecord(payload.message) ? payload.message : {};
        this.readUsage(message.usage);
        return;
      }
      case 'content_block_start': {
        const block = isRecord(payload.content_block) ? payload.content_block : {};
        if (block.type === 'tool_use') {
          const name = String(block.name ?? '');
          this.toolBlocks.set(index, {
            id: String(block.id ?? ''),
            name,
            json: '',
            input: block.input,
            answer: this.answerTool !== undefined && name === this.answerTool,
          });
        }
        const startText = block.type === 'text' ? text(block.text) : undefined;
        if (startText) yield { type: 'text', text: startText };
        return;
      }
      case 'content_block_delta': {
        const delta = isRecord(payload.delta) ? payload.delta : {};
        if (delta.type === 'text_delta' && text(delta.text)) yield { type: 'text', text: String(delta.text) };
        if (delta.type === 'thinking_delta' && text(delta.thinking)) yield { type: 'reasoning', text: String(delta.thinking) };
        const block = this.toolBlocks.get(index);
        if (delta.type === 'input_json_delta' && block && typeof delta.partial_json === 'string') {
          block.json += delta.partial_json;
          if (block.answer && delta.partial_json) yield { type: 'text', text: delta.partial_json };
        }
        return;
      }
      case 'content_block_stop':
        yield* this.closeToolBlock(index);
        return;
      case 'message_delta': {
        const delta = isRecord(payload.delta) ? payload.delta : {};
        this.stopReason = text(delta.stop_reason) ?? this.stopReason;
        this.readUsage(payload.usage);
        return;
      }
      case 'message_stop':
        this.stopped = true;
        return;
      case 'error':
        throw errorFromStream(payload, this.context);
      // ping (which may come anywhere, even inside a tool block) and future event types carry nothing we need.
    }
  }

  /** Tool blocks still open at message_stop (max_tokens mid-arguments) fail here if their JSON is torn. */
  *end(): Generator<StreamEvent> {
    for (const index of [...this.toolBlocks.keys()]) yield* this.closeToolBlock(index);
    // The forced answer tool ends the turn with "tool_use", but what came back is the answer, not a call to run.
    const finishReason = this.answered && this.stopReason === 'tool_use' ? 'stop' : finishReasonOf(this.stopReason);
    yield { type: 'done', finishReason, ...(this.hasUsage() ? { usage: this.usage } : {}) };
  }

  private *closeToolBlock(index: number): Generator<StreamEvent> {
    const block = this.toolBlocks.get(index);
    if (!block) return;
    this.toolBlocks.delete(index);
    if (block.answer) {
      this.answered = true;
      // Streamed already; an input that came whole with the block's start (no deltas) is the answer here.
      if (block.json === '') yield { type: 'text', text: JSON.stringify(block.input ?? {}) };
      return;
    }
    if (!block.name) throw badResponseError(this.context, 'a tool call without a tool name');
    // A tool called without arguments streams only `partial_json: ""`; its start block's `input` is then the answer.
    const args = block.json.trim() === '' ? parseToolArguments(block.input, block.name) : parseToolArguments(block.json, block.name);
    yield { type: 'tool_call', call: { id: block.id, name: block.name, arguments: args } };
  }

  /** message_delta repeats totals, not increments: the latest value wins. */
  private readUsage(raw: unknown): void {
    if (!isRecord(raw)) return;
    if (typeof raw.input_tokens === 'number') this.usage.inputTokens = raw.input_tokens;
    if (typeof raw.output_tokens === 'number') this.usage.outputTokens = raw.output_tokens;
  }

  private hasUsage(): boolean {
    return this.usage.inputTokens !== undefined || this.usage.outputTokens !== undefined;
  }
}

function finishReasonOf(stopReason: string | undefined): FinishReason {
  if (stopReason === 'end_turn' || stopReason === 'stop_sequence') return 'stop';
  if (stopReason === 'max_tokens') return 'length';
  if (stopReason === 'tool_use') return 'tool_calls';
  return 'other';
}

async function listModels(settings: HttpSettings, options: ProviderOptions, signal?: AbortSignal): Promise<string[]> {
  const base = anthropicBaseUrl(options.baseUrl);
  const context: ErrorContext = { host: new URL(base).host, apiKey: options.apiKey };
  const body = await fetchJson(settings, {
    method: 'GET',
    // The default page is 20 models; one page of 1000 is all of them.
    url: `${base}/models?limit=1000`,
    headers: headers(options.apiKey),
    signal,
    context,
  });
  if (!Array.isArray(body.data)) throw badResponseError(context, 'the model list is missing');
  return body.data.flatMap((entry) => (isRecord(entry) && typeof entry.id === 'string' ? [entry.id] : []));
}
