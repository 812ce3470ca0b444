// Embeddings from the person's model server: the embedding model of one of their connections, behind
// the same Embedder interface as the on-device model, so the queue, the backfill and the model-switch
// rules are the same. Two wire shapes:
//   OpenAI-compatible  POST <base>/embeddings  {model, input: [..]} → {data: [{index, embedding}]}
//                      (OpenAI, LM Studio, llama.cpp --embedding, vLLM, Ollama's /v1)
//   Ollama             POST <root>/api/embed   {model, input: [..]} → {embeddings: [[..]]}
// An OpenAI-compatible connection whose server has no /embeddings but answers /api/embed at the same
// origin is an Ollama, and is spoken to natively from then on. The vector length is read from the
// first answer (a probe when opened); batches start at 32 texts and halve when the server says the
// request is too big (413, or a 400 saying so).
//
// A server that does not answer (connection refused, a timeout, 5xx, 429) is "down": calls fail at
// once with server_unreachable until probe() finds it back, so a search never waits on a dead server
// and the queue's retries (retry.ts) cost nothing. The connection's address and key are read again
// for every request (an edited connection is followed), and the key goes only to that address.
import { EmbedError } from './types.js';
import type { Embedder } from './types.js';

/** A saved model connection as the embedder needs it. */
export interface ServerConnection {
  id: string;
  name: string;
  /** The provider kind: 'openai-compatible', 'ollama' (others have no embedding endpoint). */
  kind: string;
  baseUrl: string;
  apiKey?: string;
}

export type EmbedDialect = 'openai' | 'ollama';

export interface OpenServerEmbedderOptions {
  /** The connection as it is now; read again for each request. Rejects when it no longer exists. */
  connection: () => Promise<ServerConnection>;
  /** The model's name on the server, e.g. `nomic-embed-text`. */
  model: string;
  fetch?: typeof fetch;
  /** Bound of one request (default 30 s)… */
  timeoutMs?: number;
  /** …and of the first one, while the server may still be loading the model (default 120 s). */
  firstTimeoutMs?: number;
  /** Texts per request to start with (default 32); halved when the server says a request is too big. */
  batchSize?: number;
  /** The server stopped answering (up = false, with why) or answers again. */
  onHealth?: (up: boolean, reason: string | null) => void;
  /** The connection is gone or can no longer embed (deleted, its kind changed): no retry will help. */
  onGone?: (reason: string) => void;
  /** The server's model now gives vectors of another length (other weights under the same name): open it again. */
  onReplaced?: (reason: string) => void;
}

/** Stored with every vector: the server's model, apart from the on-device catalogue's ids. */
export function serverModelId(model: string): string {
  return `server:${model}`;
}

/** Kinds whose servers may have an embedding model. */
export function canEmbed(kind: string): boolean {
  return kind === 'openai-compatible' || kind === 'ollama';
}

const DEFAULT_BATCH = 32;
const DEFAULT_TIMEOUT_MS = 30_000;
const FIRST_TIMEOUT_MS = 120_000;
/** An answer larger than this is not a batch of vectors (32 × 8,192 numbers as text is ~6 MB). */
const MAX_BODY_BYTES = 64 * 1024 * 1024;
const MAX_DIMENSIONS = 16_000;

/** Opens the embedder: one probe text tells the vector length (and whether the server answers at all). */
export async function openServerEmbedder(options: OpenServerEmbedderOptions): Promise<ServerEmbedder> {
  const model = options.model.trim();
  if (!model) throw new EmbedError('server_refused', 'Name the embedding model on your server (for example nomic-embed-text).');
  const embedder = new ServerEmbedder({ ...options, model });
  await embedder.start();
  return embedder;
}

export class ServerEmbedder implements Embedder {
  readonly modelId: string;
  private vectorSize = 0;
  private batchSize: number;
  /** The wire shape that answered, for the address it answered at. */
  private dialect: { baseUrl: string; kind: string; shape: EmbedDialect } | null = null;
  private answered = false;
  private closed = false;
  /** Why the server is down, or null while it answers. */
  private downReason: string | null = null;

  constructor(private readonly options: OpenServerEmbedderOptions & { model: string }) {
    this.modelId = serverModelId(options.model);
    this.batchSize = Math.max(1, Math.floor(options.batchSize ?? DEFAULT_BATCH));
  }

  get dimensions(): number {
    return this.vectorSize;
  }

  /** The model's name on the server. */
  get model(): string {
    return this.options.model;
  }

  /** Texts per request now (it shrinks when the server says a request is too big). */
  get currentBatchSize(): number {
    return this.batchSize;
  }

  /** Null while the server answers; otherwise why it is taken as gone. */
  get down(): string | null {
    return this.downReason;
  }

  /** Which wire shape the server answered in, once it has. */
  get shape(): EmbedDialect | null {
    return this.dialect?.shape ?? null;
  }

  async start(): Promise<void> {
    const [vector] = await this.request(['ping'], undefined, true);
    this.vectorSize = vector!.length;
  }

  /**
   * Asks the server once even while it is down (one short text); true when it answered with a vector
   * of the right length, which brings it back up. Never rejects.
   */
  async probe(): Promise<boolean> {
    if (this.closed) return false;
    try {
      const [vector] = await this.request(['ping'], undefined, true);
      return vector!.length === this.vectorSize;
    } catch {
      return false;
    }
  }

  async embed(texts: string[], options: { signal?: AbortSignal } = {}): Promise<Float32Array[]> {
    if (this.closed) throw new EmbedError('cancelled', 'The embedding model was closed.');
    if (options.signal?.aborted) throw new EmbedError('cancelled', 'The embedding was cancelled.');
    if (!texts.length) return [];
    if (this.downReason) throw new EmbedError('server_unreachable', this.downReason);
    const out: Float32Array[] = [];
    for (let start = 0; start < texts.length;) {
      const size = this.batchSize;
      const part = texts.slice(start, start + size);
      try {
        out.push(...(await this.request(part, options.signal, false)));
        start += part.length;
      } catch (err) {
        // Too big: the same texts again in smaller requests (the size is kept for later calls).
        if (err instanceof TooBig && size > 1) {
          this.batchSize = Math.max(1, Math.floor(size / 2));
          continue;
        }
        throw err instanceof TooBig ? new EmbedError('server_refused', err.message) : err;
      }
    }
    return out;
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  // ---- one request ----

  private async request(texts: string[], signal: AbortSignal | undefined, probe: boolean): Promise<Float32Array[]> {
    let connection: ServerConnection;
    try {
      connection = await this.options.connection();
    } catch (err) {
      throw this.gone(`The connection for memory search is gone: ${(err as Error).message}`);
    }
    if (!canEmbed(connection.kind)) {
      throw this.gone(`“${connection.name}” (${connection.kind}) has no embedding models; choose an OpenAI-compatible or Ollama connection.`);
    }
    const known = this.dialect && this.dialect.baseUrl === connection.baseUrl && this.dialect.kind === connection.kind ? this.dialect.shape : null;
    const shape: EmbedDialect = known ?? (connection.kind === 'ollama' ? 'ollama' : 'openai');
    try {
      const vectors = await this.send(connection, shape, texts, signal, probe).catch(async (err: unknown) => {
        // An OpenAI-compatible address without /embeddings may be an Ollama (native /api/embed at the same origin).
        if (!known && shape === 'openai' && err instanceof NoEndpoint) return this.send(connection, 'ollama', texts, signal, probe, err);
        throw err;
      });
      this.up();
      return vectors;
    } catch (err) {
      if (err instanceof EmbedError && err.code === 'server_unreachable') this.goneDown(err.message);
      if (err instanceof NoEndpoint) throw new EmbedError('server_refused', err.message);
      throw err;
    }
  }

  private async send(
    connection: ServerConnection,
    shape: EmbedDialect,
    texts: string[],
    signal: AbortSignal | undefined,
    probe: boolean,
    earlier?: NoEndpoint,
  ): Promise<Float32Array[]> {
    const url = endpoint(connection.baseUrl, shape);
    const limitMs = this.answered ? (this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS) : (this.options.firstTimeoutMs ?? FIRST_TIMEOUT_MS);
    const timeout = AbortSignal.timeout(probe && this.answered ? Math.min(limitMs, 10_000) : limitMs);
    const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json' };
    // The key is the connection's, for the connection's own address (built from its base URL above).
    if (connection.apiKey) headers.Authorization = `Bearer ${connection.apiKey}`;
    const where = new URL(url).origin;
    let response: Response;
    let body: string;
    try {
      response = await (this.options.fetch ?? globalThis.fetch)(url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: this.options.model, input: texts }),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      body = await readBounded(response);
    } catch (err) {
      if (signal?.aborted) throw new EmbedError('cancelled', 'The embedding was cancelled.');
      if (timeout.aborted) throw new EmbedError('server_unreachable', `Your model server at ${where} didn't answer within ${Math.round(limitMs / 1000)} s.`);
      throw new EmbedError('server_unreachable', `Your model server at ${where} isn't answering (${networkWords(err)}).`);
    }
    const said = redact(serverWords(body), connection.apiKey);
    if (response.status >= 500 || response.status === 429 || response.status === 408) {
      throw new EmbedError('server_unreachable', `Your model server at ${where} answered ${response.status}${said ? `: ${said}` : ''}.`);
    }
    if (response.status === 413 || (response.status === 400 && texts.length > 1 && /too (many|large|long|big)|batch|maximum|exceed|limit/i.test(said))) {
      throw new TooBig(`Your model server refused ${texts.length} texts at once (${response.status}${said ? `: ${said}` : ''}).`);
    }
    if (response.status === 401 || response.status === 403) {
      throw new EmbedError('server_refused', `Your model server at ${where} refused the connection’s API key (${response.status}${said ? `: ${said}` : ''}).`);
    }
    if ((response.status === 404 || response.status === 405) && !/model/i.test(said)) {
      const words = `Your model server at ${where} has no embeddings endpoint (${new URL(url).pathname} answered ${response.status}).`;
      throw new NoEndpoint(earlier ? `${earlier.message.replace(/\.$/, '')}, nor ${new URL(url).pathname}.` : words);
    }
    if (!response.ok) {
      throw new EmbedError('server_refused', `Your model server could not embed with “${this.options.model}” (${response.status}${said ? `: ${said}` : ''}).`);
    }
    const vectors = parseVectors(body, shape, texts.length, this.options.model);
    if (this.vectorSize && vectors.some((v) => v.length !== this.vectorSize)) {
      const reason = `“${this.options.model}” on your server now gives vectors of ${vectors[0]!.length} numbers instead of ${this.vectorSize}: it was replaced.`;
      this.options.onReplaced?.(reason);
      throw new EmbedError('model_broken', reason);
    }
    this.dialect = { baseUrl: connection.baseUrl, kind: connection.kind, shape };
    this.answered = true;
    return vectors;
  }

  private gone(reason: string): EmbedError {
    if (this.answered) this.options.onGone?.(reason);
    return new EmbedError('server_refused', reason);
  }

  private goneDown(reason: string): void {
    const was = this.downReason;
    this.downReason = reason;
    if (was === null) this.options.onHealth?.(false, reason);
  }

  private up(): void {
    if (this.downReason === null) return;
    this.downReason = null;
    this.options.onHealth?.(true, null);
  }
}

/** The request was too big for the server: the caller splits it. */
class TooBig extends Error {}
/** No embeddings endpoint at this address. */
class NoEndpoint extends Error {}

/** Where to POST: `<base>/embeddings` (the base names the /v1 root), or `<root>/api/embed` (/v1 or /api dropped). */
export function endpoint(baseUrl: string, shape: EmbedDialect): string {
  const base = baseUrl.trim().replace(/\/+$/, '');
  if (shape === 'openai') return `${base}/embeddings`;
  return `${base.replace(/\/(v1|api)$/, '')}/api/embed`;
}

/** The numbers of the answer, checked (one per text, all of one length, finite) and made unit length. */
export function parseVectors(body: string, shape: EmbedDialect, count: number, model: string): Float32Array[] {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new EmbedError('server_refused', `Your model server's answer for “${model}” was not JSON: ${body.slice(0, 120)}`);
  }
  const raw = rawVectors(json, shape);
  if (!raw) throw new EmbedError('server_refused', `Your model server's answer for “${model}” carried no embeddings (is it an embedding model?).`);
  if (raw.length !== count) throw new EmbedError('server_refused', `Your model server returned ${raw.length} vectors for ${count} texts.`);
  const vectors = raw.map((v) => toVector(v, model));
  const length = vectors[0]?.length ?? 0;
  if (vectors.some((v) => v.length !== length))
    throw new EmbedError('server_refused', `Your model server returned vectors of different lengths for “${model}”.`);
  return vectors;
}

function rawVectors(json: unknown, shape: EmbedDialect): unknown[] | null {
  if (typeof json !== 'object' || json === null) return null;
  const o = json as Record<string, unknown>;
  if (shape === 'ollama' && Array.isArray(o.embeddings)) return o.embeddings;
  if (Array.isArray(o.data)) {
    const items = o.data as { index?: unknown; embedding?: unknown }[];
    const indexed = items.every((d) => typeof d?.index === 'number');
    const ordered = indexed ? [...items].sort((a, b) => (a.index as number) - (b.index as number)) : items;
    return ordered.map((d) => d?.embedding);
  }
  // Some servers answer the other shape on either path.
  return Array.isArray(o.embeddings) ? o.embeddings : null;
}

function toVector(value: unknown, model: string): Float32Array {
  let v: Float32Array;
  if (typeof value === 'string') {
    // encoding_format "base64": little-endian float32s.
    const bytes = Buffer.from(value, 'base64');
    v = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength - (bytes.byteLength % 4)));
  } else if (Array.isArray(value) && value.every((x) => typeof x === 'number')) {
    v = Float32Array.from(value as number[]);
  } else {
    throw new EmbedError('server_refused', `Your model server's answer for “${model}” has an embedding that is not a list of numbers.`);
  }
  if (v.length < 1 || v.length > MAX_DIMENSIONS) throw new EmbedError('server_refused', `Your model server returned a vector of ${v.length} numbers.`);
  let norm = 0;
  for (const x of v) {
    if (!Number.isFinite(x)) throw new EmbedError('server_refused', `Your model server returned a vector with ${x} in it.`);
    norm += x * x;
  }
  if (norm === 0) throw new EmbedError('server_refused', `Your model server returned a vector of zeros for “${model}”.`);
  const scale = 1 / Math.sqrt(norm);
  for (let i = 0; i < v.length; i++) v[i]! *= scale;
  return v;
}

/** The body as text, refusing one that would not fit a batch of vectors. */
async function readBounded(response: Response): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? 0);
  if (declared > MAX_BODY_BYTES) {
    await response.body?.cancel().catch(() => {});
    throw new Error(`an answer of ${declared} bytes`);
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => {});
      throw new Error(`an answer over ${MAX_BODY_BYTES} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** What a server says in an error body: OpenAI's error.message, Ollama's error, or the start of the text. */
function serverWords(body: string): string {
  const text = body.trim();
  if (!text) return '';
  try {
    const json = JSON.parse(text) as { error?: unknown; message?: unknown; detail?: unknown };
    const error = json.error;
    if (typeof error === 'string') return error.slice(0, 300);
    if (error && typeof error === 'object' && typeof (error as { message?: unknown }).message === 'string')
      return (error as { message: string }).message.slice(0, 300);
    if (typeof json.message === 'string') return json.message.slice(0, 300);
    if (typeof json.detail === 'string') return json.detail.slice(0, 300);
  } catch {
    // not JSON: a proxy's page, plain text
  }
  return text
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 200);
}

function redact(text: string, key: string | undefined): string {
  return key && key.length >= 4 ? text.split(key).join('…') : text;
}

function networkWords(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code === 'ECONNREFUSED') return 'connection refused';
  if (cause?.code === 'ECONNRESET' || cause?.code === 'UND_ERR_SOCKET') return 'the connection was dropped';
  if (cause?.code === 'ENOTFOUND') return 'no such host';
  return cause?.message ?? (err as Error).message ?? String(err);
}
