// Versioned migrations, each applied inside a transaction with its version row, so a crash mid-way
// leaves the database at the previous version rather than half-migrated.
import type { Database } from './database.js';
import { migrations as allMigrations, type Migration } from './migrations/index.js';

export async function migrate(db: Database, migrations: Migration[] = allMigrations): Promise<number[]> {
  await db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version integer PRIMARY KEY,
    name text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`);
  const applied = new Set((await db.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
  const newest = Math.max(0, ...applied);
  const known = Math.max(0, ...migrations.map((m) => m.version));
  if (newest > known) {
    throw new Error(
      `This data folder was written by a newer Anima (schema ${newest}, this version knows ${known}). ` + 'Update Anima to open it; nothing was changed.',
    );
  }
  const done: number[] = [];
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
    if (applied.has(m.version)) continue;
    await db.transaction(async (tx) => {
      await tx.exec(m.sql);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
    });
    done.push(m.version);
  }
  return done;
}
