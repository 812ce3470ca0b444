// Provider connections: their settings in the database, their keys in the secret store.
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import {
  ApiError,
  type ApiInput,
  type ConnectionTestResult,
  type DetectedServer,
  type ErrorCode,
  type ProviderConfig,
  type ProviderKind,
} from '../../shared/api.js';
import { DEFAULT_GENERATION, describeGenerationProblem, generationProblems, type GenerationSettings, type ServerSoftware } from '../../shared/api/providers.js';
import type { Database } from '../db/open.js';
import { defaultReserve, nextCharsPerToken } from '../llm/context.js';
import { createProvider } from '../llm/index.js';
import { ProviderError, type ChatProvider } from '../llm/types.js';
import type { SecretStore } from '../settings/secrets.js';
import { askServer } from './server-facts.js';

interface Row {
  id: string;
  kind: ProviderKind;
  name: string;
  base_url: string;
  model: string;
  context_tokens: number;
  server_software: ServerSoftware | null;
  server_context_tokens: number | null;
  capabilities: string[] | null;
  model_family: string | null;
  server_checked_at: Date | null;
  temperature: number | null;
  top_p: number | null;
  max_reply_tokens: number | null;
  stop_sequences: string[];
}

export const DEFAULT_CONTEXT_TOKENS = 8192;

/** providers.schema_refused: where a server refused a JSON Schema for an answer, and what it said. */
interface SchemaRefusal {
  kind: string;
  baseUrl: string;
  model: string;
  said: string;
  at: string;
}

/** What a server said is asked again after this long, when the connection is used (a server restarted with another window). */
export const SERVER_FACTS_MAX_AGE_MS = 60 * 60 * 1000;
/** A server that could not be asked on use is asked again after this long at the soonest. */
const ASK_AGAIN_AFTER_MS = 5 * 60 * 1000;

/** Local servers worth probing on first run. Ollama is offered through its own API, which can be told the context to use. */
export const LOCAL_SERVERS: { name: string; kind: ProviderKind; baseUrl: string }[] = [
  { name: 'Ollama', kind: 'ollama', baseUrl: 'http://127.0.0.1:11434' },
  { name: 'LM Studio', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:1234/v1' },
];

const secretName = (id: string) => `provider:${id}:apiKey`;

export interface ResolvedProvider {
  /**
   * The connection, its `contextTokens` being the budget: the smaller of the person's setting and
   * the window its server says it gives — what the conversation is fitted into (and, for Ollama,
   * the num_ctx it is asked to run with).
   */
  config: ProviderConfig;
  client: ChatProvider;
}

/** The context Anima budgets: the person's setting, unless the server gives less. */
export function contextBudget(config: Pick<ProviderConfig, 'contextTokens' | 'server'>): number {
  const server = config.server?.contextTokens;
  return server ? Math.min(server, config.contextTokens) : config.contextTokens;
}

export interface ProviderServiceOptions {
  fetch?: typeof fetch;
  timeoutMs?: number;
  modelsDir: string;
  localServers?: typeof LOCAL_SERVERS;
}

export class Providers {
  /** When each connection's server was last asked on use, answered or not: one that cannot be reached is not asked on every turn. */
  private readonly askedOnUse = new Map<string, number>();

  constructor(
    private readonly db: Database,
    private readonly secrets: SecretStore,
    private readonly options: ProviderServiceOptions,
  ) {}

  private async toConfig(r: Row): Promise<ProviderConfig> {
    return {
      id: r.id,
      kind: r.kind,
      name: r.name,
      baseUrl: r.base_url,
      model: r.model,
      contextTokens: r.context_tokens,
      hasApiKey: Boolean(await this.secrets.get(secretName(r.id))),
      server: r.server_checked_at
        ? {
            software: r.server_software,
            contextTokens: r.server_context_tokens,
            capabilities: r.capabilities,
            family: r.model_family,
            checkedAt: r.server_checked_at.toISOString(),
          }
        : null,
      generation: {
        // real is single precision: 0.7 reads back as 0.699999988.
        temperature: r.temperature === null ? null : roundSetting(r.temperature),
        topP: r.top_p === null ? null : roundSetting(r.top_p),
        maxTokens: r.max_reply_tokens,
        stop: r.stop_sequences,
      },
    };
  }

  async list(): Promise<ProviderConfig[]> {
    const rows = (await this.db.query<Row>('SELECT * FROM providers ORDER BY created_at')).rows;
    return Promise.all(rows.map((r) => this.toConfig(r)));
  }

  async get(id: string): Promise<ProviderConfig> {
    const row = (await this.db.query<Row>('SELECT * FROM providers WHERE id = $1', [id])).rows[0];
    if (!row) throw new ApiError('not_found', 'That model connection does not exist any more.', 'id');
    return this.toConfig(row);
  }

  /** The connection as saved, with its key: for a client of the connection's own server (its embedding model). */
  async withKey(id: string): Promise<ProviderConfig & { apiKey: string | undefined }> {
    return { ...(await this.get(id)), apiKey: await this.secrets.get(secretName(id)) };
  }

  async save(input: ApiInput<'providers.save'>): Promise<ProviderConfig> {
    const baseUrl = normaliseBaseUrl(input.kind, input.baseUrl);
    const id = input.id ?? randomUUID();
    const saved = input.id ? await this.get(input.id) : undefined;
    if (saved) await this.keepKeyAt(saved, input.kind, baseUrl, input.apiKey);
    const contextTokens = input.contextTokens ?? DEFAULT_CONTEXT_TOKENS;
    // Kept as they are when not given; checked against this kind and context either way (a smaller context can make a kept reply length too long).
    const generation = checkGeneration(input.kind, input.generation ?? saved?.generation ?? DEFAULT_GENERATION, contextTokens);
    await this.db.query(
      `INSERT INTO providers (id, kind, name, base_url, model, context_tokens, temperature, top_p, max_reply_tokens, stop_sequences)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb)
       ON CONFLICT (id) DO UPDATE SET kind = EXCLUDED.kind, name = EXCLUDED.name, base_url = EXCLUDED.base_url,
         model = EXCLUDED.model, context_tokens = EXCLUDED.context_tokens, updated_at = now(),
         temperature = EXCLUDED.temperature, top_p = EXCLUDED.top_p, max_reply_tokens = EXCLUDED.max_reply_tokens,
         stop_sequences = EXCLUDED.stop_sequences,
         chars_per_token = CASE WHEN (providers.kind, providers.base_url, providers.model) = (EXCLUDED.kind, EXCLUDED.base_url, EXCLUDED.model)
           THEN providers.chars_per_token END`,
      [
        id,
        input.kind,
        input.name,
        baseUrl,
        input.model.trim(),
        contextTokens,
        generation.temperature,
        generation.topP,
        generation.maxTokens,
        JSON.stringify(generation.stop),
      ],
    );
    if (input.apiKey !== undefined) {
      if (input.apiKey.trim()) await this.secrets.set(secretName(id), input.apiKey.trim());
      else await this.secrets.delete(secretName(id));
    }
    // On connect and on every change of address or model: what the server really gives this model.
    await this.askServerFor(id);
    return this.get(id);
  }

  /**
   * Asks the connection's server about its model and stores the answer. When the server cannot be
   * reached, a save forgets the old answer (it may be about another address or model) and a turn
   * keeps it (it is about this very connection). Quiet and bounded: a save or a turn never fails
   * because of it.
   */
  private async askServerFor(id: string, { keepIfUnreachable = false } = {}): Promise<void> {
    const config = await this.get(id);
    const apiKey = await this.secrets.get(secretName(id));
    const facts = await askServer({ kind: config.kind, baseUrl: config.baseUrl, model: config.model, apiKey, fetch: this.options.fetch });
    if (!facts && keepIfUnreachable) return;
    await this.db.query(
      `UPDATE providers SET server_software = $2, server_context_tokens = $3, capabilities = $4::jsonb, model_family = $5,
         server_checked_at = $6 WHERE id = $1`,
      [
        id,
        facts?.software ?? null,
        facts?.contextTokens ?? null,
        facts?.capabilities ? JSON.stringify(facts.capabilities) : null,
        facts?.family ?? null,
        facts ? facts.checkedAt : null,
      ],
    );
  }

  async delete(id: string): Promise<void> {
    await this.get(id);
    await this.db.query('DELETE FROM providers WHERE id = $1', [id]);
    await this.secrets.delete(secretName(id));
  }

  /**
   * A saved key goes only to the server it was saved for. Testing or saving a saved connection with
   * another server (another origin or kind) and no key of its own is refused, so no caller can have
   * the host send a key it is never shown to an address of the caller's choosing.
   */
  private async keepKeyAt(saved: ProviderConfig, kind: ProviderKind, baseUrl: string, apiKey: string | undefined): Promise<void> {
    if (apiKey !== undefined || !saved.hasApiKey || sameServer(saved.kind, saved.baseUrl, kind, baseUrl)) return;
    throw new ApiError('invalid_input', 'The saved API key is only sent to the server it was saved for. Enter the key again to use another address.', 'apiKey');
  }

  private client(kind: ProviderKind, baseUrl: string, apiKey: string | undefined, contextTokens?: number): ChatProvider {
    return createProvider({
      kind,
      baseUrl,
      apiKey,
      contextTokens,
      fetch: this.options.fetch,
      timeoutMs: this.options.timeoutMs,
      modelsDir: this.options.modelsDir,
    });
  }

  async resolve(id: string): Promise<ResolvedProvider> {
    let config = await this.get(id);
    // Never asked (a connection from before Anima asked), or long ago: ask before budgeting — at
    // most every few minutes, so a server that does not answer the questions costs no turn a wait.
    const stale = !config.server || Date.now() - Date.parse(config.server.checkedAt) > SERVER_FACTS_MAX_AGE_MS;
    const askedRecently = Date.now() - (this.askedOnUse.get(id) ?? 0) < ASK_AGAIN_AFTER_MS;
    if ((config.kind === 'ollama' || config.kind === 'openai-compatible') && stale && !askedRecently) {
      this.askedOnUse.set(id, Date.now());
      await this.askServerFor(id, { keepIfUnreachable: true });
      config = await this.get(id);
    }
    const apiKey = await this.secrets.get(secretName(id));
    const budget = contextBudget(config);
    return { config: { ...config, contextTokens: budget }, client: this.client(config.kind, config.baseUrl, apiKey, budget) };
  }

  /**
   * What the server said when it refused a JSON Schema for a background answer on this connection, as
   * it is addressed now (kind, address and model); null when it has not refused. A refusal recorded
   * for another address or model no longer applies: the new one is asked with a schema again.
   */
  async schemaRefusal(id: string): Promise<string | null> {
    const row = (
      await this.db.query<{ kind: string; base_url: string; model: string; schema_refused: SchemaRefusal | null }>(
        'SELECT kind, base_url, model, schema_refused FROM providers WHERE id = $1',
        [id],
      )
    ).rows[0];
    const r = row?.schema_refused;
    return r && r.kind === row.kind && r.baseUrl === row.base_url && r.model === row.model ? r.said : null;
  }

  /** Remembers that this connection's server refused a JSON Schema (its words), for its current address and model. */
  async rememberSchemaRefusal(id: string, said: string): Promise<void> {
    await this.db.query(
      `UPDATE providers SET schema_refused = jsonb_build_object('kind', kind, 'baseUrl', base_url, 'model', model, 'said', $2::text, 'at', now())
        WHERE id = $1`,
      [id, said.slice(0, 1000)],
    );
  }

  /** The connection's calibrated characters per token (see llm/context.ts); null until its server reported a count. */
  async charsPerToken(id: string): Promise<number | null> {
    const row = (await this.db.query<{ chars_per_token: number | null }>('SELECT chars_per_token FROM providers WHERE id = $1', [id])).rows[0];
    return row?.chars_per_token ?? null;
  }

  /** One request's sample (charsPerTokenSample) moves the connection's ratio; null changes nothing. */
  async calibrate(id: string, sample: number | null): Promise<void> {
    if (sample === null || !Number.isFinite(sample) || sample <= 0) return;
    const next = nextCharsPerToken(await this.charsPerToken(id), sample);
    await this.db.query('UPDATE providers SET chars_per_token = $2 WHERE id = $1', [id, next]);
  }

  /** Tests a saved connection (id) or unsaved form values: can we list models, and is the chosen one there? */
  async test(input: ApiInput<'providers.test'>): Promise<ConnectionTestResult> {
    const saved = input.id ? await this.get(input.id) : undefined;
    const kind = input.kind;
    const baseUrl = normaliseBaseUrl(kind, input.baseUrl || saved?.baseUrl || '');
    if (saved) await this.keepKeyAt(saved, kind, baseUrl, input.apiKey);
    // A key typed in the form (or '' for "remove the key") stands; otherwise the saved one.
    const apiKey = input.apiKey !== undefined ? input.apiKey.trim() || undefined : saved ? await this.secrets.get(secretName(saved.id)) : undefined;
    const model = (input.model || saved?.model || '').trim();
    const started = performance.now();
    try {
      const models = await this.client(kind, baseUrl, apiKey).listModels(AbortSignal.timeout(10_000));
      const latencyMs = Math.round(performance.now() - started);
      if (model && models.length > 0 && !models.includes(model)) {
        return {
          ok: false,
          code: 'provider_model_not_found',
          message: `Connected, but this server has no model named “${model}”. It offers: ${models.slice(0, 8).join(', ')}${models.length > 8 ? '…' : ''}.`,
          models,
          latencyMs,
        };
      }
      const server = model ? await askServer({ kind, baseUrl, model, apiKey, fetch: this.options.fetch }) : null;
      return {
        ok: true,
        message: models.length ? `Connected — ${models.length} model${models.length === 1 ? '' : 's'} available.` : 'Connected.',
        models,
        latencyMs,
        ...(server ? { server } : {}),
      };
    } catch (err) {
      const latencyMs = Math.round(performance.now() - started);
      if (err instanceof ProviderError) return { ok: false, code: err.code, message: err.message, models: [], latencyMs };
      const code: ErrorCode = 'provider_unreachable';
      return { ok: false, code, message: `Could not connect: ${(err as Error).message}`, models: [], latencyMs };
    }
  }

  /** Looks for model servers already running on this machine (Ollama, LM Studio). */
  async detect(): Promise<DetectedServer[]> {
    const found = await Promise.all(
      (this.options.localServers ?? LOCAL_SERVERS).map(async (server): Promise<DetectedServer | undefined> => {
        try {
          const models = await this.client(server.kind, server.baseUrl, undefined).listModels(AbortSignal.timeout(1500));
          return { name: server.name, kind: server.kind, baseUrl: server.baseUrl, models };
        } catch {
          return undefined;
        }
      }),
    );
    return found.filter((s): s is DetectedServer => s !== undefined);
  }
}

/** A sampling setting as a person typed it: at most three decimals (the column is single precision). */
function roundSetting(value: number): number {
  return Math.round(value * 1000) / 1000;
}

/** The settings, rounded, or the first problem as an error naming its field; nothing is written then. */
export function checkGeneration(kind: ProviderKind, g: GenerationSettings, contextTokens: number): GenerationSettings {
  const problem = generationProblems(kind, g, contextTokens)[0];
  if (problem) throw new ApiError('invalid_input', describeGenerationProblem(problem), `generation.${problem.field}`);
  return { ...g, temperature: g.temperature === null ? null : roundSetting(g.temperature), topP: g.topP === null ? null : roundSetting(g.topP) };
}

/**
 * What a chat request carries of the connection's generation settings: only those set, so the
 * server's own default applies to the rest.
 */
export function chatGeneration(g: GenerationSettings): { temperature?: number; topP?: number; maxTokens?: number; stop?: string[] } {
  return {
    ...(g.temperature !== null ? { temperature: g.temperature } : {}),
    ...(g.topP !== null ? { topP: g.topP } : {}),
    ...(g.maxTokens !== null ? { maxTokens: g.maxTokens } : {}),
    ...(g.stop.length ? { stop: g.stop } : {}),
  };
}

/**
 * The context a chat's history is fitted into: the budget, less what a longest reply set beyond the
 * fit's own reserve needs (the request and its reply must fit the window together); at least half.
 */
export function chatHistoryContext(config: Pick<ProviderConfig, 'contextTokens' | 'generation'>): number {
  const maxTokens = config.generation.maxTokens;
  if (maxTokens === null) return config.contextTokens;
  const beyond = Math.max(0, maxTokens - defaultReserve(config.contextTokens));
  return Math.max(Math.floor(config.contextTokens / 2), config.contextTokens - beyond);
}

/**
 * Same kind and same origin (scheme, host, port): where a saved key may travel. Ollama's own API
 * and its OpenAI-compatible route are one server: switching a connection between them keeps its key.
 */
function sameServer(kindA: ProviderKind, urlA: string, kindB: ProviderKind, urlB: string): boolean {
  const family = (kind: ProviderKind) => (kind === 'ollama' ? 'openai-compatible' : kind);
  if (family(kindA) !== family(kindB)) return false;
  if (kindA === 'local') return urlA === urlB;
  try {
    return new URL(urlA).origin === new URL(urlB).origin;
  } catch {
    return false;
  }
}

/** Trims and checks a base URL: http(s) only for remote kinds; a clear error naming the field otherwise. */
export function normaliseBaseUrl(kind: ProviderKind, raw: string): string {
  const value = raw.trim().replace(/\/+$/, '');
  if (kind === 'local') return value;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ApiError('invalid_input', 'The server address must be a full URL, like http://127.0.0.1:11434/v1.', 'baseUrl');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ApiError('invalid_input', 'The server address must start with http:// or https://.', 'baseUrl');
  }
  if (url.username || url.password) {
    throw new ApiError('invalid_input', 'Put the API key in its own field, not in the address.', 'baseUrl');
  }
  return value;
}

export function modelsDir(dataDir: string): string {
  return path.join(dataDir, 'models');
}
