// Where the companion's data is kept (Settings → Data → Storage): this folder's own database, or a
// PostgreSQL server. The choice is read when Anima starts, so a change applies on the next start.
import { z } from 'zod';
import { empty } from './fields.js';

/** A postgres:// URL as typed; checked in words by the host (the password never comes back out). */
const databaseUrl = z
  .string()
  .trim()
  .min(1)
  .max(2000)
  .regex(/^postgres(ql)?:\/\//i, 'expected a PostgreSQL URL such as postgres://anima@localhost:5432/anima');

export type ExtensionState = 'installed' | 'available' | 'missing';

/** What a server offers, as the Test button shows it. */
export interface StorageProbe {
  /** The URL with its password hidden. */
  where: string;
  version: string;
  /** PostgreSQL 15 or newer. */
  supported: boolean;
  /** Required: installed, or available for Anima to create. */
  trgm: ExtensionState;
  /** Search by meaning: installed or available; without it search by meaning is unavailable there. */
  vector: ExtensionState;
  /** The database (its schema): empty, holding Anima's data, or other tables. */
  contents: 'empty' | 'anima' | 'other';
}

export interface StorageStatus {
  /** Where this running Anima keeps its data. */
  engine: 'pglite' | 'postgres';
  /** The data folder's database, or the server's URL with its password hidden. */
  where: string;
  /** What the folder chose for the next start: a server (its URL without the password), or null: this folder. */
  chosen: { url: string; hasPassword: boolean } | null;
  /** The choice differs from what runs: it applies when Anima starts again. */
  restartNeeded: boolean;
  /** Set by an `anima serve --database` (or ANIMA_DATABASE): it wins over the choice. */
  fixedByCommandLine: boolean;
}

export const storageInputs = {
  'storage.status': empty,
  /** Connects to the server (changing nothing there) and says what it offers. A URL without a password uses the stored one when it is the chosen server. */
  'storage.test': z.object({ url: databaseUrl }).strict(),
  /** Chooses where the data is kept from the next start: a server (checked first: reachable, 15+, pg_trgm), or null: this data folder. */
  'storage.choose': z.object({ url: databaseUrl.nullable() }).strict(),
} as const;

export interface StorageOutputs {
  'storage.status': StorageStatus;
  'storage.test': StorageProbe;
  'storage.choose': StorageStatus;
}
