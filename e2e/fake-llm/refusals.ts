// How real servers refuse a JSON Schema for an answer, as HTTP error replies the fake server can send.
// The messages are the servers' own words, taken from reports of them; the framing around a message is
// each server's usual error shape (see ../../../shared/fixtures/llm-wire/README.md for those shapes).
import type { FakeResponse } from './server.js';

export interface Refusal {
  server: string;
  /** Where the words come from. */
  source: string;
  reply: Extract<FakeResponse, { kind: 'error' }>;
}

export const SCHEMA_REFUSALS = {
  /**
   * OpenAI, a model without structured outputs (chatgpt-4o-latest, early 2025). Message verbatim from
   * web-infra-dev/midscene#259; `param` as openai/openai-dotnet#276 reports it ("Parameter:
   * response_format"); the body pretty-printed with 4 spaces like every OpenAI error body.
   */
  openai: {
    server: 'OpenAI',
    source: 'web-infra-dev/midscene#259, openai/openai-dotnet#276',
    reply: {
      kind: 'error',
      status: 400,
      body: `${JSON.stringify(
        {
          error: {
            message:
              "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model. Learn more about supported models at the Structured Outputs guide: https://platform.openai.com/docs/guides/structured-outputs",
            type: 'invalid_request_error',
            param: 'response_format',
            code: null,
          },
        },
        null,
        4,
      )}\n`,
    },
  },
  /**
   * vLLM before json_schema (vllm-project/vllm#7654, August 2024, added it): the request model's
   * literal check, in vLLM's `{"object":"error",…}` shape. The literal's words as a vLLM-style server
   * behind OpenRouter printed them (a report in the stored code index), with vLLM's own two values.
   */
  vllm: {
    server: 'vLLM',
    source: 'vllm-project/vllm#7654 (what it added); an OpenRouter-relayed literal_error report',
    reply: {
      kind: 'error',
      status: 400,
      body: JSON.stringify({
        object: 'error',
        message:
          "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', 'ctx': {'expected': \"'text' or 'json_object'\"}}]",
        type: 'BadRequestError',
        param: null,
        code: 400,
      }),
    },
  },
  /** llama.cpp's server, build 3777 (September 2024): with HTTP 500. Verbatim from ggml-org/llama.cpp#9522. */
  llamacpp: {
    server: 'llama.cpp',
    source: 'ggml-org/llama.cpp#9522',
    reply: {
      kind: 'error',
      status: 500,
      body: JSON.stringify({
        error: { code: 500, message: 'response_format type must be one of "text" or "json_object", but got: json_schema', type: 'server_error' },
      }),
      // The client retries a 500 at once instead of after its backoff (a test's patience).
      headers: { 'retry-after-ms': '0' },
    },
  },
  /** LM Studio, a schema it would not take. Verbatim from bhimrazy/receipt-ocr#20. */
  lmstudio: {
    server: 'LM Studio',
    source: 'bhimrazy/receipt-ocr#20',
    reply: { kind: 'error', status: 400, body: JSON.stringify({ error: "'response_format.json_schema.schema' must be an object" }) },
  },
  /** Anthropic, forcing a tool while thinking is on (mastra-ai/mastra#7507, usestrix/strix#503: a 400 invalid_request_error). */
  anthropic: {
    server: 'Anthropic',
    source: 'mastra-ai/mastra#7507, usestrix/strix#503',
    reply: {
      kind: 'error',
      status: 400,
      body: JSON.stringify({
        type: 'error',
        error: { type: 'invalid_request_error', message: 'Thinking may not be enabled when tool_choice forces tool use.' },
      }),
    },
  },
} satisfies Record<string, Refusal>;
