// Every way a model server can fail, turned into a ProviderError whose message a person can act on.
// Server text is only ever repeated with the API key removed: some servers echo the key back.
import { isRecord, text } from './json.js';
import { ProviderError } from './types.js';

export interface ErrorContext {
  /** host[:port] of the server, named in messages so the person knows which server is meant. */
  host: string;
  /** The model asked for, so "not found" can name it. */
  model?: string;
  apiKey?: string;
}

/** What a server said about a failure, from whichever error shape it uses. */
interface ErrorDetails {
  status?: number;
  type?: string;
  code?: string;
  message?: string;
}

/**
 * Reads OpenAI's `{error:{message,type,code}}` (Anthropic nests the same fields under
 * `{type:"error",error:{…}}`), Ollama's `{error:"…"}`, and the bare `{message,type,code}` of
 * llama.cpp's legacy `error:` field and vLLM. A numeric `code` (llama.cpp) is an HTTP status.
 */
function readErrorDetails(payload: unknown): ErrorDetails {
  if (!isRecord(payload)) return {};
  if (typeof payload.error === 'string') return { message: payload.error };
  const body = isRecord(payload.error) ? payload.error : payload;
  return {
    status: typeof body.code === 'number' ? body.code : undefined,
    code: text(body.code),
    type: text(body.type),
    message: text(body.message),
  };
}

/** An HTTP error response; `body` is its raw text, JSON or not. */
export function errorFromHttp(status: number, body: string, ctx: ErrorContext): ProviderError {
  let details: ErrorDetails;
  try {
    details = readErrorDetails(JSON.parse(body));
  } catch {
    // Proxies and some servers answer in plain text ("404 page not found") or HTML, which is noise.
    const plain = body.trim();
    details = plain && !plain.startsWith('<') ? { message: plain } : {};
  }
  return classify({ ...details, status }, ctx, 'http');
}

/** An error reported inside a stream that had started with HTTP 200. */
export function errorFromStream(payload: unknown, ctx: ErrorContext): ProviderError {
  return classify(readErrorDetails(payload), ctx, 'stream');
}

/** The data of an SSE error event: usually JSON, but a server in trouble may send plain words. */
export function errorFromEvent(data: string, ctx: ErrorContext): ProviderError {
  let payload: unknown;
  try {
    payload = JSON.parse(data);
  } catch {
    payload = { error: data };
  }
  return errorFromStream(payload, ctx);
}

const CONTEXT_OVERFLOW = /context[ _-]?(length|size|window)|exceed_context_size|maximum context|prompt is too long/i;
const QUOTA_KIND = /insufficient_quota|billing/i;
const QUOTA_TEXT = /exceeded your current quota|billing|credit balance/i;
const AUTH_KIND = /authentication|permission|invalid_api_key|unauthorized/i;
const MODEL_MISSING = /model_not_found|model\b.*\b(not found|does not exist|doesn't exist|not exist)|(unknown|no such|invalid) model/i;

function classify(details: ErrorDetails, ctx: ErrorContext, where: 'http' | 'stream'): ProviderError {
  const { status } = details;
  const kind = `${details.type ?? ''} ${details.code ?? ''}`;
  const said = details.message ?? '';
  const make = (code: ProviderError['code'], message: string) => new ProviderError(code, redact(message, ctx.apiKey), status);
  const { host } = ctx;

  if (CONTEXT_OVERFLOW.test(`${kind} ${said}`)) {
    return make(
      'provider_context_overflow',
      "This conversation is too long for the model's context window. " +
        'Start a new conversation, or choose a model with a larger context window in Settings.',
    );
  }
  if (QUOTA_KIND.test(kind) || QUOTA_TEXT.test(said)) {
    return make('provider_quota', `Your account at ${host} has run out of credit or quota. Check your plan and billing with the provider.`);
  }
  if (status === 401 || status === 403 || AUTH_KIND.test(kind)) {
    // The server's own text is left out: it often quotes part of the key.
    return make('provider_auth', `The model server at ${host} didn't accept the API key. Check the key in Settings → Providers.`);
  }
  if (MODEL_MISSING.test(`${kind} ${said}`) || (status === 404 && /\bmodel\b/i.test(said))) {
    const which = ctx.model ? `The model "${ctx.model}"` : 'The requested model';
    return make('provider_model_not_found', `${which} isn't available at ${host}. Choose another model in Settings, or install it on the server first.`);
  }
  if (status === 429 || /rate_limit/i.test(kind)) {
    return make('provider_rate_limited', `${host} is getting too many requests right now. Wait a minute and try again.`);
  }
  if (status === 529 || /overloaded/i.test(kind)) {
    return make('provider_server_error', `The model server at ${host} is overloaded right now. Try again in a moment.`);
  }
  if ((status !== undefined && status >= 500) || /server_error|api_error/i.test(kind)) {
    const http = status ? ` (HTTP ${status})` : '';
    return make('provider_server_error', `The model server at ${host} ran into a problem${http}. Try again in a moment.${quote(said)}`);
  }
  if (status === 404) {
    return make('provider_bad_response', `The server at ${host} doesn't offer the model API at this address. Check the server address in Settings.`);
  }
  if (where === 'stream') {
    return make('provider_server_error', `The model server at ${host} reported an error while answering.${quote(said)}`);
  }
  const http = status ? ` (HTTP ${status})` : '';
  return make('provider_bad_response', `The model server at ${host} refused the request${http}.${quote(said)}`);
}

function quote(said: string): string {
  if (!said) return '';
  const short = said.length > 300 ? `${said.slice(0, 300)}…` : said;
  return ` It said: "${short}"`;
}

/** Removes the key from text we did not write; too-short "keys" are placeholders, not secrets. */
function redact(message: string, apiKey: string | undefined): string {
  return apiKey && apiKey.length >= 4 ? message.split(apiKey).join('[API key]') : message;
}

/** fetch() failed before any response: refused, DNS, reset. Node puts the reason in `cause`. */
export function unreachableError(ctx: ErrorContext, error: unknown): ProviderError {
  const cause = isRecord(error) ? error.cause : undefined;
  const nested = isRecord(cause) && Array.isArray(cause.errors) ? cause.errors[0] : cause;
  const code = isRecord(nested) ? nested.code : undefined;
  const dns = code === 'ENOTFOUND' || code === 'EAI_AGAIN';
  const hint = dns ? ' Is it running, and is the address right?' : ' Is it running?';
  return new ProviderError('provider_unreachable', `Can't reach the model server at ${ctx.host}.${hint}`);
}

export function timeoutError(ctx: ErrorContext, timeoutMs: number): ProviderError {
  const seconds = Number((timeoutMs / 1000).toFixed(1));
  return new ProviderError(
    'provider_timeout',
    `The model server at ${ctx.host} stopped answering (nothing for ${seconds} s). Try again, or check that it is running.`,
  );
}

export function cancelledError(): ProviderError {
  return new ProviderError('cancelled', 'The request was stopped.');
}

export function streamEndedError(ctx: ErrorContext): ProviderError {
  return new ProviderError('provider_bad_response', `The connection to ${ctx.host} ended before the reply was complete.`);
}

/**
 * Why a "stream" that carried no event at all was not one, from its first bytes: an error sent as
 * plain JSON with HTTP 200 (its own words, classified like any error), a web page (a proxy, a login
 * portal, a wrong address), or other text. Undefined when the bytes were an event stream after all.
 */
export function notAStreamError(head: string, ctx: ErrorContext): ProviderError | undefined {
  const text = head.trim();
  if (text === '' || /^(data|event|id|retry):/m.test(text)) return undefined;
  if (text.startsWith('{')) {
    try {
      const payload: unknown = JSON.parse(text);
      if (payload && typeof payload === 'object' && 'error' in payload) return errorFromStream(payload, ctx);
    } catch {
      // Cut or not JSON: described as text below.
    }
  }
  if (text.startsWith('<')) {
    const title = /<title[^>]*>([^<]{1,120})<\/title>/i.exec(text)?.[1]?.trim();
    return new ProviderError(
      'provider_bad_response',
      `The server at ${ctx.host} answered with a web page${title ? ` (“${title}”)` : ''}, not a model reply. Check the server address: it should be the model API's, like http://127.0.0.1:11434/v1.`,
    );
  }
  const said = redact(text.replace(/\s+/g, ' ').slice(0, 200), ctx.apiKey);
  return new ProviderError('provider_bad_response', `The server at ${ctx.host} answered “${said}” instead of a model reply.`);
}

export function badResponseError(ctx: ErrorContext, what: string): ProviderError {
  return new ProviderError('provider_bad_response', `The model server at ${ctx.host} sent a reply Anima couldn't use: ${what}.`);
}

/** The error a stream throws, marked with whether text had already reached the person. */
export function streamFailure(error: unknown, ctx: ErrorContext, textStreamed: boolean): ProviderError {
  let failure: ProviderError;
  if (error instanceof ProviderError) {
    failure = error;
  } else {
    failure = new ProviderError('provider_bad_response', `Something went wrong while reading the reply from ${ctx.host}.`);
    failure.cause = error;
  }
  failure.midStream = textStreamed;
  return failure;
}
