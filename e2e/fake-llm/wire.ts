// The bytes the fake model server sends, in the shapes of the real captures in
// ../shared/fixtures/llm-wire (see its README): OpenAI chat-completion chunks and Anthropic
// Messages events, plus the error bodies each API returns.

export type Dialect = 'openai' | 'anthropic';

/** A streamed reply in three parts, so a cut stream can send the opening and the text but no ending. */
interface WireStream {
  opening: string[];
  text: string[];
  ending: string[];
}

export interface ReplyInfo {
  model: string;
  /** A sequence number that makes ids unique within one server. */
  serial: number;
  inputTokens: number;
}

/** Splits text the way models stream it: one word per chunk (with its leading space), or into `chunks` even parts. */
export function splitText(text: string, chunks?: number): string[] {
  const words = text.match(/\s*\S+|\s+$/g) ?? [];
  if (chunks === undefined) return words;
  const units = words.length >= chunks ? words : Array.from(text);
  const count = Math.max(1, Math.min(chunks, units.length));
  const parts: string[] = [];
  for (let i = 0; i < count; i++) {
    parts.push(units.slice(Math.floor((i * units.length) / count), Math.floor(((i + 1) * units.length) / count)).join(''));
  }
  return parts.filter((part) => part !== '');
}

export function textStream(dialect: Dialect, info: ReplyInfo, pieces: string[]): WireStream {
  return dialect === 'openai' ? openAiText(info, pieces) : anthropicText(info, pieces);
}

export function toolCallStream(dialect: Dialect, info: ReplyInfo, name: string, args: Record<string, unknown>): WireStream {
  // Argument JSON arrives in slices that split keys and strings, as real servers send it.
  const json = JSON.stringify(args);
  const third = Math.ceil(json.length / 3);
  const slices = [json.slice(0, third), json.slice(third, 2 * third), json.slice(2 * third)].filter((s) => s !== '');
  return dialect === 'openai' ? openAiToolCall(info, name, slices) : anthropicToolCall(info, name, slices);
}

// --- OpenAI chat completions (openai-chat-text.sse, openai-chat-tool-call.sse) ---

function openAiChunk(info: ReplyInfo, choices: unknown[], extra: Record<string, unknown> = {}): string {
  const chunk = {
    id: `chatcmpl-fake${info.serial}`,
    object: 'chat.completion.chunk',
    created: 1_727_346_168,
    model: info.model,
    system_fingerprint: 'fp_fake',
    choices,
    ...extra,
  };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

function openAiChoice(delta: Record<string, unknown>, finishReason: string | null = null): unknown[] {
  return [{ index: 0, delta, logprobs: null, finish_reason: finishReason }];
}

function openAiEnding(info: ReplyInfo, finishReason: string, outputTokens: number): string[] {
  const usage = { prompt_tokens: info.inputTokens, completion_tokens: outputTokens, total_tokens: info.inputTokens + outputTokens };
  return [openAiChunk(info, openAiChoice({}, finishReason)), openAiChunk(info, [], { usage }), 'data: [DONE]\n\n'];
}

function openAiText(info: ReplyInfo, pieces: string[]): WireStream {
  return {
    opening: [openAiChunk(info, openAiChoice({ role: 'assistant', content: '', refusal: null }))],
    text: pieces.map((content) => openAiChunk(info, openAiChoice({ content }))),
    ending: openAiEnding(info, 'stop', pieces.length),
  };
}

function openAiToolCall(info: ReplyInfo, name: string, slices: string[]): WireStream {
  const id = `call_${String(info.serial).padStart(24, '0')}`;
  return {
    opening: [
      openAiChunk(info, openAiChoice({ role: 'assistant', content: null })),
      openAiChunk(info, openAiChoice({ tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: '' } }] })),
      ...slices.map((slice) => openAiChunk(info, openAiChoice({ tool_calls: [{ index: 0, function: { arguments: slice } }] }))),
    ],
    text: [],
    ending: openAiEnding(info, 'tool_calls', slices.length + 1),
  };
}

// --- Anthropic Messages (anthropic-messages-text.sse, anthropic-messages-tool-use.sse) ---

function anthropicEvent(data: { type: string } & Record<string, unknown>): string {
  return `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
}

function anthropicOpening(info: ReplyInfo, block: Record<string, unknown>): string[] {
  const message = {
    id: `msg_fake${info.serial}`,
    type: 'message',
    role: 'assistant',
    model: info.model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: info.inputTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 },
  };
  return [
    anthropicEvent({ type: 'message_start', message }),
    anthropicEvent({ type: 'content_block_start', index: 0, content_block: block }),
    anthropicEvent({ type: 'ping' }),
  ];
}

function anthropicEnding(stopReason: string, outputTokens: number): string[] {
  return [
    anthropicEvent({ type: 'content_block_stop', index: 0 }),
    anthropicEvent({
      type: 'message_delta',
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: outputTokens },
    }),
    anthropicEvent({ type: 'message_stop' }),
  ];
}

function anthropicText(info: ReplyInfo, pieces: string[]): WireStream {
  return {
    opening: anthropicOpening(info, { type: 'text', text: '' }),
    text: pieces.map((text) => anthropicEvent({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } })),
    ending: anthropicEnding('end_turn', pieces.length),
  };
}

function anthropicToolCall(info: ReplyInfo, name: string, slices: string[]): WireStream {
  const id = `toolu_fake${String(info.serial).padStart(20, '0')}`;
  const jsonDelta = (partial_json: string) => anthropicEvent({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json } });
  return {
    // The first input_json_delta is always empty, as in the capture.
    opening: [...anthropicOpening(info, { type: 'tool_use', id, name, input: {} }), jsonDelta(''), ...slices.map(jsonDelta)],
    text: [],
    ending: anthropicEnding('tool_use', slices.length + 1),
  };
}

// --- Error bodies ---

const OPENAI_ERRORS: Record<number, [type: string, code: string | null, message: (model: string) => string]> = {
  400: ['invalid_request_error', null, () => 'Invalid request.'],
  401: [
    'invalid_request_error',
    'invalid_api_key',
    () => 'Incorrect API key provided: fake****. You can find your API key at https://platform.openai.com/account/api-keys.',
  ],
  404: ['invalid_request_error', 'model_not_found', (m) => `The model \`${m}\` does not exist or you do not have access to it.`],
  429: [
    'requests',
    'rate_limit_exceeded',
    (m) => `Rate limit reached for ${m} in organization org-fake on requests per min (RPM): ` + 'Limit 3, Used 3, Requested 1. Please try again in 20s.',
  ],
  500: ['server_error', null, () => 'The server had an error while processing your request. Sorry about that!'],
};

const ANTHROPIC_ERRORS: Record<number, [type: string, message: (model: string) => string]> = {
  400: ['invalid_request_error', () => 'Invalid request.'],
  401: ['authentication_error', () => 'invalid x-api-key'],
  403: ['permission_error', () => 'Your API key does not have permission to use the specified resource.'],
  404: ['not_found_error', (m) => `model: ${m}`],
  429: ['rate_limit_error', () => 'Number of request tokens has exceeded your per-minute rate limit.'],
  500: ['api_error', () => 'Internal server error'],
  529: ['overloaded_error', () => 'Overloaded'],
};

/** The body a real server of this dialect sends with this status: OpenAI pretty-prints with 4 spaces. */
export function errorBody(dialect: Dialect, status: number, model: string): string {
  const fallback = status >= 500 ? 500 : 400;
  if (dialect === 'anthropic') {
    const [type, message] = ANTHROPIC_ERRORS[status] ?? ANTHROPIC_ERRORS[fallback]!;
    return JSON.stringify({ type: 'error', error: { type, message: message(model) } });
  }
  const [type, code, message] = OPENAI_ERRORS[status] ?? OPENAI_ERRORS[fallback]!;
  return `${JSON.stringify({ error: { message: message(model), type, param: null, code } }, null, 4)}\n`;
}
