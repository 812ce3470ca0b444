// "Keep my data on a PostgreSQL server" (Settings → Data): the data folder's choice of engine, read
// when the host starts (so a change applies on the next start), and the Test that checks a server
// before it is chosen.
//
// The choice is `<dataDir>/database.json` — the URL with its password taken out — and the password
// goes to the secret store the API keys use (OS-encrypted in the desktop app, the owner-only file in
// browser mode), under DATABASE_PASSWORD_SECRET: never in plain JSON, never in a log.
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { ApiError } from '../../shared/api.js';
import type { StorageProbe } from '../../shared/api.js';
import { checkDatabaseUrl, redactDatabaseUrl } from './postgres.js';

export const DATABASE_CHOICE_FILE = 'database.json';
export const DATABASE_PASSWORD_SECRET = 'database.password';
const PROBE_TIMEOUT_MS = 10_000;
const MIN_SERVER_VERSION = 150000;

/** The secret store as this file uses it (settings/secrets.ts's SecretStore). */
export interface SecretsLike {
  get(name: string): Promise<string | undefined>;
  set(name: string, value: string): Promise<void>;
  delete(name: string): Promise<void>;
}

interface ChoiceFile {
  format: 'anima-database-choice';
  version: 1;
  /** postgres://user@host:port/db — never with a password. */
  url: string;
}

export interface DatabaseChoice {
  /** The URL without its password. */
  url: string;
  hasPassword: boolean;
}

/** The URL without its password, and the password (decoded), apart. */
export function splitPassword(url: string): { url: string; password: string | undefined } {
  const u = new URL(url);
  const password = u.password ? decodeURIComponent(u.password) : undefined;
  u.password = '';
  return { url: u.toString(), password };
}

function withPassword(url: string, password: string | undefined): string {
  if (!password) return url;
  const u = new URL(url);
  u.password = encodeURIComponent(password);
  return u.toString();
}

const choiceFile = (dataDir: string) => path.join(dataDir, DATABASE_CHOICE_FILE);

/** What the folder chose, or null (its own `db`). An unreadable file is an error in words: the person chose something. */
export async function readDatabaseChoice(dataDir: string, secrets: SecretsLike): Promise<DatabaseChoice | null> {
  let text: string;
  try {
    text = fs.readFileSync(choiceFile(dataDir), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  let url: unknown;
  try {
    const data = JSON.parse(text) as Partial<ChoiceFile>;
    url = data.format === 'anima-database-choice' ? data.url : undefined;
  } catch {
    url = undefined;
  }
  if (typeof url !== 'string') {
    throw new ApiError(
      'internal',
      `${choiceFile(dataDir)} is unreadable. Remove it to keep the data in this folder again, or choose the server again in Settings → Data.`,
    );
  }
  return { url, hasPassword: (await secrets.get(DATABASE_PASSWORD_SECRET)) !== undefined };
}

/** The URL the host opens (password put back from the secret store), or undefined: the data folder. */
export async function chosenDatabaseUrl(dataDir: string, secrets: SecretsLike): Promise<string | undefined> {
  const choice = await readDatabaseChoice(dataDir, secrets);
  if (!choice) return undefined;
  return withPassword(choice.url, await secrets.get(DATABASE_PASSWORD_SECRET));
}

/** A chosen server that would not open at start, in words that say how to go back to the folder's own data. */
export function chosenServerFailed(dataDir: string, err: unknown): ApiError {
  const reason = err instanceof Error ? err.message : String(err);
  return new ApiError(
    err instanceof ApiError ? err.code : 'internal',
    `${reason} (Anima is set to keep its data on that server: Settings → Data → Storage.) To use this folder's own data again, remove ${choiceFile(dataDir)} and start Anima again.`,
  );
}

/** Saves the choice (null: back to the data folder). The password goes to the secret store; the file is written aside and renamed. */
export async function writeDatabaseChoice(dataDir: string, secrets: SecretsLike, url: string | null): Promise<DatabaseChoice | null> {
  const file = choiceFile(dataDir);
  if (url === null) {
    fs.rmSync(file, { force: true });
    await secrets.delete(DATABASE_PASSWORD_SECRET);
    return null;
  }
  checkDatabaseUrl(url);
  const parts = splitPassword(url);
  if (parts.password) await secrets.set(DATABASE_PASSWORD_SECRET, parts.password);
  else await secrets.delete(DATABASE_PASSWORD_SECRET);
  const body: ChoiceFile = { format: 'anima-database-choice', version: 1, url: parts.url };
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(tmp, file);
  return { url: parts.url, hasPassword: !!parts.password };
}

/**
 * Fills in the stored password when `url` has none and is the chosen server (the person tests what
 * Settings shows, which never carries the password).
 */
export async function withStoredPassword(dataDir: string, secrets: SecretsLike, url: string): Promise<string> {
  checkDatabaseUrl(url);
  if (new URL(url).password) return url;
  const choice = await readDatabaseChoice(dataDir, secrets).catch(() => null);
  if (!choice || splitPassword(url).url !== choice.url) return url;
  return withPassword(url, await secrets.get(DATABASE_PASSWORD_SECRET));
}

/** Connects (without taking Anima's lock or changing anything) and says what the server offers. */
export async function probeDatabase(url: string): Promise<StorageProbe> {
  checkDatabaseUrl(url);
  const where = redactDatabaseUrl(url);
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: PROBE_TIMEOUT_MS, query_timeout: PROBE_TIMEOUT_MS });
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (err) {
    throw new ApiError('invalid_input', `Could not connect to the PostgreSQL server at ${where}: ${(err as Error).message}`, 'url');
  }
  try {
    const r = await client.query<{
      version: string;
      num: string;
      trgm: string | null;
      trgm_ok: boolean;
      vector: string | null;
      vector_ok: boolean;
      tables: number;
      anima: boolean;
    }>(
      `SELECT current_setting('server_version') AS version, current_setting('server_version_num') AS num,
              (SELECT extversion FROM pg_extension WHERE extname = 'pg_trgm') AS trgm,
              EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm') AS trgm_ok,
              (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS vector,
              EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') AS vector_ok,
              (SELECT count(*)::int FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relkind IN ('r', 'p')) AS tables,
              EXISTS (SELECT 1 FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relname = 'schema_migrations') AS anima`,
    );
    const row = r.rows[0]!;
    const state = (installed: string | null, available: boolean) => (installed ? 'installed' : available ? 'available' : 'missing');
    return {
      where,
      version: row.version,
      supported: Number(row.num) >= MIN_SERVER_VERSION,
      trgm: state(row.trgm, row.trgm_ok),
      vector: state(row.vector, row.vector_ok),
      contents: row.anima ? 'anima' : Number(row.tables) > 0 ? 'other' : 'empty',
    };
  } finally {
    await client.end().catch(() => {});
  }
}
