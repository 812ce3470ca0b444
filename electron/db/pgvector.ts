// Whether the installed pgvector build may be loaded into the installed PGlite.
//
// pgvector for PGlite is a WASM side module built against one PGlite release. Loaded into another it
// starts and even answers vector queries, but corrupts the server: with @electric-sql/pglite-pgvector
// 0.0.15 (built for PGlite 0.5.14) in PGlite 0.5.15, 0.5.16 and 0.5.17, pg_trgm's `%` returned no
// rows or never returned — memory's near-duplicate check hung — merely because the bundle was loaded;
// in 0.5.14 the same code and tests pass. So it is loaded only into the PGlite its package names as
// its peer, exactly; otherwise the database opens without it and nothing embeds (the embedding
// service says why once a model is set).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Database } from './database.js';
import { PostgresDatabase } from './postgres.js';

export interface Manifest {
  name?: string;
  version?: string;
  peerDependencies?: Record<string, string>;
}

/** A package's package.json, found from its entry point (neither package exports it). */
function manifest(name: string): Manifest | null {
  try {
    let dir = path.dirname(createRequire(import.meta.url).resolve(name));
    for (let i = 0; i < 4; i++) {
      const file = path.join(dir, 'package.json');
      if (fs.existsSync(file)) {
        const json = JSON.parse(fs.readFileSync(file, 'utf8')) as Manifest;
        if (json.name === name) return json;
      }
      dir = path.dirname(dir);
    }
  } catch {
    // Not installed, or unreadable: treated as unusable below.
  }
  return null;
}

export interface PgvectorSupport {
  usable: boolean;
  /** Why not, in words for a log line. */
  reason: string;
  /** Why not, as a whole sentence for Settings, where the engine says it its own way (PostgreSQL). */
  problem?: string;
}

let known: PgvectorSupport | undefined;

export function pgvectorSupport(): PgvectorSupport {
  known ??= supportFor(manifest('@electric-sql/pglite'), manifest('@electric-sql/pglite-pgvector'));
  return known;
}

/** The rule, on the two packages' manifests: pgvector only into the exact PGlite release it names as its peer. */
export function supportFor(pglite: Manifest | null, pgvector: Manifest | null): PgvectorSupport {
  const builtFor = pgvector?.peerDependencies?.['@electric-sql/pglite'];
  if (!pglite?.version || !pgvector?.version) return { usable: false, reason: 'the pgvector extension for PGlite is not installed' };
  if (builtFor !== pglite.version) {
    return {
      usable: false,
      reason: `@electric-sql/pglite-pgvector ${pgvector.version} is built for PGlite ${builtFor ?? '(unknown)'}, and this is PGlite ${pglite.version}`,
    };
  }
  return { usable: true, reason: '' };
}

/**
 * Whether this database can store and search vectors: on PGlite the build rule above; on a
 * PostgreSQL server, whether its pgvector extension is installed (db/postgres.ts, read at open).
 */
export function vectorSupport(db: Database): PgvectorSupport {
  if (db instanceof PostgresDatabase) return db.vectors;
  return pgvectorSupport();
}
