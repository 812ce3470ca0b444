// The fake model server's embedding endpoints, in the two wire shapes the app speaks:
//   POST /v1/embeddings  {model, input: string | string[]} → {object: "list", data: [{object: "embedding", index, embedding}], model, usage}
//   POST /api/embed      {model, input: string | string[]} → {model, embeddings: [[..]], total_duration, load_duration, prompt_eval_count}
// (shapes from OpenAI's API reference and Ollama's docs/api.md). The vectors are deterministic: a
// hashed bag of words (64 numbers, unit length), so texts that share words are near each other and a
// test of search by meaning can name the neighbour it expects; a few synonyms count as one word,
// so meaning can be found where words are not. Switches make the server refuse a
// batch over a size, answer 500, drop the connection, or not know a model — for the "server gone"
// and "batch too big" paths.
import type http from 'node:http';
import type { FakeLlm } from './server.js';

export const FAKE_EMBED_DIMENSIONS = 64;

export interface FakeEmbeddings {
  /** Models the endpoints answer for (others get the server's "not found"). */
  models: string[];
  dimensions: number;
  /** ok; error: 500 to every request; close: the connection is dropped without an answer. */
  mode: 'ok' | 'error' | 'close';
  /** Requests with more texts than this get a 413 (undefined: no limit). */
  maxBatch?: number;
  /** /v1/embeddings answers 404 as a server without it would (an Ollama reached only natively). */
  openaiMissing: boolean;
  /** Texts embedded, per endpoint. */
  served: { openai: number; ollama: number };
  /** Sizes of the requests that were answered, in order. */
  batches: number[];
}

const STOP = new Set([
  'the',
  'a',
  'an',
  'of',
  'to',
  'in',
  'on',
  'and',
  'is',
  'are',
  'was',
  'at',
  'for',
  'with',
  'their',
  'his',
  'her',
  'person',
  's',
  // the task prefixes an app puts in front (nomic-embed-text's search_query: / search_document:, e5's query: / passage:)
  'search',
  'query',
  'document',
  'passage',
]);

/**
 * Words the fake takes to mean the same (each to the first of its group), so a test can search by
 * meaning with words that search by words does not find.
 */
const SYNONYMS: Record<string, string> = Object.fromEntries(
  [
    ['sister', 'sibling'],
    ['lives', 'dwells', 'resides'],
    ['near', 'beside', 'by'],
    ['river', 'waterway', 'stream'],
    ['cello', 'violoncello'],
    ['sundays', 'weekends'],
    ['kettle', 'teapot'],
    ['姐', '妹'],
  ].flatMap((group) => group.map((w) => [w, group[0]!])),
);

/** Words of a text (lower case, letters and digits; each CJK character is a word), stop words left out, synonyms as one. */
export function words(text: string): string[] {
  const out: string[] = [];
  for (const m of text.toLowerCase().matchAll(/[\p{Script=Han}]|[\p{L}\p{N}]+/gu)) {
    const w = m[0];
    if (!STOP.has(w)) out.push(SYNONYMS[w] ?? w);
  }
  return out;
}

/** FNV-1a, 32 bits. */
function hash(word: string): number {
  let h = 0x811c9dc5;
  for (const ch of word) {
    h ^= ch.codePointAt(0)!;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** The hashed bag of words of `text`: each word adds ±1 at its slot; unit length (a text of no words gets one fixed slot). */
export function bagOfWords(text: string, dimensions = FAKE_EMBED_DIMENSIONS): number[] {
  const v = new Array<number>(dimensions).fill(0);
  for (const w of words(text)) {
    const h = hash(w);
    v[h % dimensions]! += h & 0x80000000 ? -1 : 1;
  }
  const norm = Math.sqrt(v.reduce((sum, x) => sum + x * x, 0));
  if (norm === 0) {
    v[0] = 1;
    return v;
  }
  return v.map((x) => Number((x / norm).toFixed(6)));
}

export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return dot / Math.sqrt(na * nb);
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/** Adds both endpoints to `fake`; the returned object switches how they answer. */
export function serveEmbeddings(fake: FakeLlm, init: Partial<Pick<FakeEmbeddings, 'models' | 'dimensions' | 'maxBatch'>> = {}): FakeEmbeddings {
  const state: FakeEmbeddings = {
    models: init.models ?? ['nomic-embed-text'],
    dimensions: init.dimensions ?? FAKE_EMBED_DIMENSIONS,
    mode: 'ok',
    maxBatch: init.maxBatch,
    openaiMissing: false,
    served: { openai: 0, ollama: 0 },
    batches: [],
  };

  const answer = (shape: 'openai' | 'ollama') => (body: unknown, res: http.ServerResponse) => {
    if (state.mode === 'close') {
      res.socket?.destroy();
      return;
    }
    if (state.mode === 'error') {
      return send(
        res,
        500,
        shape === 'ollama' ? { error: 'llama runner process has terminated' } : { error: { message: 'Internal server error', type: 'server_error' } },
      );
    }
    if (shape === 'openai' && state.openaiMissing) {
      return send(res, 404, { error: { message: 'Invalid URL (POST /v1/embeddings)', type: 'invalid_request_error', param: null, code: null } });
    }
    const request = (body ?? {}) as { model?: unknown; input?: unknown };
    const model = typeof request.model === 'string' ? request.model : '';
    const input = typeof request.input === 'string' ? [request.input] : request.input;
    if (!Array.isArray(input) || !input.every((t) => typeof t === 'string')) {
      return send(
        res,
        400,
        shape === 'ollama'
          ? { error: 'invalid input type' }
          : { error: { message: "'input' must be a string or an array of strings", type: 'invalid_request_error' } },
      );
    }
    if (!state.models.includes(model)) {
      return send(
        res,
        404,
        shape === 'ollama'
          ? { error: `model "${model}" not found, try pulling it first` }
          : { error: { message: `The model \`${model}\` does not exist.`, type: 'invalid_request_error', code: 'model_not_found' } },
      );
    }
    if (state.maxBatch !== undefined && input.length > state.maxBatch) {
      return send(
        res,
        413,
        shape === 'ollama'
          ? { error: 'too many inputs in one request' }
          : { error: { message: `too many inputs: at most ${state.maxBatch}`, type: 'invalid_request_error' } },
      );
    }
    const vectors = (input as string[]).map((t) => bagOfWords(t, state.dimensions));
    state.served[shape] += input.length;
    state.batches.push(input.length);
    const tokens = (input as string[]).reduce((n, t) => n + words(t).length, 0);
    if (shape === 'ollama') {
      return send(res, 200, { model, embeddings: vectors, total_duration: 14_143_917, load_duration: 1_019_500, prompt_eval_count: tokens });
    }
    send(res, 200, {
      object: 'list',
      data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
      model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  };

  fake.route('POST /v1/embeddings', answer('openai'));
  fake.route('POST /api/embed', answer('ollama'));
  return state;
}
