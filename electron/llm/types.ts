// The provider interface every model backend implements: streaming text and tool calls.
import type { ErrorCode, ImageType, ProviderKind } from '../../shared/api.js';

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema for the arguments object. */
  parameters: Record<string, unknown>;
}

export interface ToolCall {
  id: string;
  name: string;
  /** Parsed arguments; {} when the model sent none. */
  arguments: Record<string, unknown>;
}

/** An image in a person's turn, for a model that sees: its type and its bytes as base64. */
export interface TurnImage {
  type: ImageType;
  data: string;
}

export type ChatTurn =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string; name?: string; images?: TurnImage[] }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[]; name?: string }
  | { role: 'tool'; toolCallId: string; name: string; content: string };

export interface StreamRequest {
  model: string;
  messages: ChatTurn[];
  tools?: ToolSpec[];
  /**
   * 'none': the tools stay declared (the history holds calls and results, which Anthropic refuses
   * without them) but the model must answer in text. Default: the model decides.
   */
  toolChoice?: 'auto' | 'none';
  /** The generation settings; absent: the server's default (Anthropic requires a length: 4096 then). */
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  /** Up to four sequences that end the reply where the model writes them. */
  stop?: string[];
  /**
   * Background answers: the JSON Schema the answer must match, asked for the way the server
   * understands (OpenAI-style `response_format: json_schema`, Ollama's `format`, a forced tool call
   * for Anthropic). Absent for chat. A server that refuses it says so with a 400 naming the field.
   */
  responseSchema?: {
    name: string;
    schema: Record<string, unknown>;
    /**
     * OpenAI's strict mode (the answer is guaranteed to match): only for a schema that follows its
     * rules (every property required, `additionalProperties: false`). Servers that constrain decoding
     * anyway (llama.cpp, vLLM, LM Studio) ignore it.
     */
    strict?: boolean;
  };
  /** Aborts the request; the stream then throws ProviderError('cancelled'). */
  signal?: AbortSignal;
}

export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
}

export type StreamEvent =
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string }
  | { type: 'tool_call'; call: ToolCall }
  | { type: 'done'; finishReason: 'stop' | 'length' | 'tool_calls' | 'other'; usage?: Usage }
  /**
   * Progress worth showing before the first text, such as an on-device model loading (many seconds
   * with real weights). Informational: a consumer that shows nothing for it skips it.
   */
  | { type: 'status'; status: 'loading_model' | 'loading_server_model'; text: string };

export interface ProviderOptions {
  kind: ProviderKind;
  baseUrl: string;
  apiKey?: string;
  /** Time allowed to connect and receive the first byte, and between two chunks. Default 60 s. */
  timeoutMs?: number;
  /** Retries on 429 and 5xx before any byte of the body was read. Default 2. */
  maxRetries?: number;
  /** Base backoff; doubles each retry (with jitter), honours Retry-After. Default 500 ms. */
  retryBaseMs?: number;
  /** Longest a whole reply may take. Default 15 minutes (60 for on-device models). */
  replyDeadlineMs?: number;
  /** Most characters of text and reasoning in one reply. Default 1,000,000. */
  maxReplyChars?: number;
  /**
   * The context window Anima budgets for this connection. Ollama's native client sends it as
   * `options.num_ctx`, so the server runs with the room the conversation was fitted into; other
   * protocols cannot be told and ignore it.
   */
  contextTokens?: number;
  /** Injected for tests and for the local provider's data dir. */
  fetch?: typeof fetch;
  /** Where local models live (local provider only). */
  modelsDir?: string;
}

export interface ChatProvider {
  readonly kind: ProviderKind;
  /**
   * Streams one model turn. The iterator ends after exactly one 'done' event; any failure —
   * HTTP error, mid-stream error event, a stream that ends without its terminator — throws a
   * ProviderError. Never yields after throwing.
   */
  stream(request: StreamRequest): AsyncIterable<StreamEvent>;
  /** The models the server offers (for the settings picker and the connection test). */
  listModels(signal?: AbortSignal): Promise<string[]>;
}

/** A failure a person can act on; `code` maps to words in the UI. */
export class ProviderError extends Error {
  constructor(
    public code: Extract<
      ErrorCode,
      | 'provider_unreachable'
      | 'provider_auth'
      | 'provider_model_not_found'
      | 'provider_rate_limited'
      | 'provider_quota'
      | 'provider_server_error'
      | 'provider_timeout'
      | 'provider_bad_response'
      | 'provider_context_overflow'
      | 'provider_not_installed'
      | 'cancelled'
    >,
    message: string,
    public status?: number,
    /** True when text had already been streamed before the failure. */
    public midStream = false,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}
