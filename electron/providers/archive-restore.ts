// Restoring model connections from Anima's own archive (electron/imports/anima-archive.ts), inside
// the importer's transaction: the row only (kind, name, address, model, context size, generation
// settings — any a room would refuse are left unset, the server's default). An archive
// never holds a key, so a restored cloud connection asks for its key again; a connection already
// here (same id) is left as it is, with its key.
import type { Transaction } from '../db/database.js';
import { DEFAULT_GENERATION, generationProblems, PROVIDER_KINDS, type GenerationSettings, type ProviderKind } from '../../shared/api/providers.js';

type Row = Record<string, unknown>;

/** An address carrying a user or password is never written (the room refuses one in any save). */
function cleanAddress(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return !url.username && !url.password;
  } catch {
    return false;
  }
}

const numberOrNull = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** The row's generation settings as this version accepts them: each one a save would refuse is unset. */
function cleanGeneration(r: Row): Row {
  const kind = (PROVIDER_KINDS as readonly unknown[]).includes(r.kind) ? (r.kind as ProviderKind) : 'openai-compatible';
  const context = typeof r.context_tokens === 'number' ? r.context_tokens : 8192;
  const stop = Array.isArray(r.stop_sequences) && r.stop_sequences.every((x) => typeof x === 'string') ? (r.stop_sequences as string[]) : [];
  const g: GenerationSettings = { temperature: numberOrNull(r.temperature), topP: numberOrNull(r.top_p), maxTokens: numberOrNull(r.max_reply_tokens), stop };
  const bad = new Set(generationProblems(kind, g, context).map((p) => p.field));
  return {
    ...r,
    temperature: bad.has('temperature') ? DEFAULT_GENERATION.temperature : g.temperature,
    top_p: bad.has('topP') ? DEFAULT_GENERATION.topP : g.topP,
    max_reply_tokens: bad.has('maxTokens') ? DEFAULT_GENERATION.maxTokens : g.maxTokens,
    stop_sequences: bad.has('stop') ? DEFAULT_GENERATION.stop : g.stop,
  };
}

/** The ids written. */
export async function restoreProviders(tx: Transaction, rows: Row[]): Promise<string[]> {
  const kept = rows
    .filter((r) => typeof r.id === 'string' && (r.kind === 'local' ? typeof r.base_url === 'string' : cleanAddress(r.base_url)))
    .map(cleanGeneration);
  if (!kept.length) return [];
  const r = await tx.query<{ id: string }>(
    `INSERT INTO providers (id, kind, name, base_url, model, context_tokens, temperature, top_p, max_reply_tokens, stop_sequences, created_at, updated_at)
     SELECT r.id, r.kind, r.name, r.base_url, r.model, r.context_tokens, r.temperature, r.top_p, r.max_reply_tokens, r.stop_sequences,
            r.created_at, r.updated_at
       FROM json_populate_recordset(NULL::providers, $1::json) AS r
     ON CONFLICT (id) DO NOTHING RETURNING id`,
    [JSON.stringify(kept)],
  );
  return r.rows.map((x) => x.id);
}

/** How many of these connection ids are here already. */
export async function providersHere(tx: Pick<Transaction, 'query'>, ids: string[]): Promise<number> {
  if (!ids.length) return 0;
  const r = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM providers WHERE id = ANY($1::text[])', [ids]);
  return Number(r.rows[0]?.n ?? 0);
}
