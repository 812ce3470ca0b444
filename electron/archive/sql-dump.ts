// anima.sql: the database as SQL, made by PGlite's own pg_dump (@electric-sql/pglite-tools), so it
// loads into a plain PostgreSQL (15 or newer) with pg_trgm — psql -f anima.sql.
//
// - The embeddings table is left out (`--exclude-table=embeddings`): its HNSW indexes need pgvector,
//   which a plain PostgreSQL rarely has, and the vectors are derived — Anima makes them again from the
//   text. The vector extension is left out with it (`--exclude-extension=vector`).
// - No owners or grants (`--no-owner --no-privileges`): the dump loads as whoever runs it.
// - Rows go 500 to an INSERT (`--rows-per-insert`; pglite-tools always asks for INSERTs, not COPY):
//   far quicker to write and to load than one statement a row.
// - pg_dump 18 writes `SET transaction_timeout`, which PostgreSQL before 17 does not know; that one
//   line is dropped so the file loads with ON_ERROR_STOP on older servers too.
//
// - The trash is left out, as anima.json leaves it out: the dump is made from a copy in which every
//   conversation in the trash is purged (forgetting/trash.ts: its messages and the citation, mention
//   and scan rows naming them go; the row stays as a blanked tombstone, because diary blocks and
//   sleep watermarks may name it — exactly what the purge leaves after 30 days). Off-the-record
//   conversations and messages hidden from recall stay: they are the person's.
//
// pg_dump speaks the wire protocol to PGlite directly, past the lock PGlite's own queries take. In a
// running app another caller's transaction could be open between two of its statements, so there it
// dumps a copy (`clone()`: the data folder as it is now, in memory) — which is also one consistent
// moment. A process that holds the database alone (the CLI, the bench) dumps it in place, unless
// something is in the trash (then it copies too: the trash is purged in the copy only).
import { pgDump } from '@electric-sql/pglite-tools/pg_dump';
import { asPGlite } from '../db/database.js';
import type { Database } from '../db/open.js';
import { purgeTrashInCopy } from '../forgetting/trash.js';

export const SQL_DUMP_ARGS = ['--rows-per-insert=500', '--no-owner', '--no-privileges', '--exclude-table=embeddings', '--exclude-extension=vector'];

export const SQL_DUMP_HEADER = `-- Anima database dump (PGlite's pg_dump).
-- Load into PostgreSQL 15 or newer with the pg_trgm extension available:
--   createdb anima && psql -v ON_ERROR_STOP=1 -d anima -f anima.sql
-- Left out: the embeddings table (derived vectors that need pgvector; Anima rebuilds them).
`;

export async function sqlDump(db: Database, opts: { alone?: boolean } = {}): Promise<string> {
  const trash = (await db.query<{ any: boolean }>('SELECT EXISTS (SELECT 1 FROM conversations WHERE deleted_at IS NOT NULL AND purged_at IS NULL) AS any'))
    .rows[0]!.any;
  const pglite = asPGlite(db, 'The SQL dump (anima.sql)');
  const source = opts.alone && !trash ? pglite : ((await pglite.clone()) as typeof pglite);
  try {
    if (trash) await purgeTrashInCopy(source, new Date());
    const file = await pgDump({ pg: source, args: SQL_DUMP_ARGS });
    const text = await file.text();
    return SQL_DUMP_HEADER + text.replace(/^SET transaction_timeout = [^\n]*\n/m, '');
  } finally {
    if (source !== db) await source.close();
  }
}
