// The entity store's test harness: one PGlite database on disk per test file (from the migrated
// template), reset to the two seeded nodes before each test, with a fresh EntityStore over it.
// The bindings below are live: a test reads the current test's store, database and conversation.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, inject } from 'vitest';
import { openDatabase, type Database } from '../../db/open.js';
import { Conversations } from '../../conversations/conversations.js';
import { MemoryStore } from '../../memory/store.js';
import { EntityStore, type Entity } from '../store.js';

// Everything but the two seeded nodes, which go back to how migration 006 left them.
const RESET = `
  DELETE FROM entity_changes; DELETE FROM entity_ambiguities; DELETE FROM entity_edges; DELETE FROM entity_mentions;
  DELETE FROM entity_scans; DELETE FROM entity_aliases;
  UPDATE entities SET merged_into = NULL, status = 'active';
  DELETE FROM entities WHERE id > 2;
  UPDATE entities SET name = 'Anima', name_key = 'anima', mention_count = 0, first_seen = NULL, last_seen = NULL WHERE id = 1;
  UPDATE entities SET name = 'You', name_key = 'you', mention_count = 0, first_seen = NULL, last_seen = NULL WHERE id = 2;
  ALTER TABLE entities ALTER COLUMN id RESTART WITH 3;
  ALTER TABLE entity_changes ALTER COLUMN id RESTART; ALTER TABLE entity_edges ALTER COLUMN id RESTART;
  ALTER TABLE entity_mentions ALTER COLUMN id RESTART;
  DELETE FROM memory_references; DELETE FROM memory_changes; DELETE FROM memories; DELETE FROM messages; DELETE FROM conversations;
  ALTER TABLE memories ALTER COLUMN id RESTART;`;

export let db: Database;
let dir: string;
export let store: EntityStore;
export let conversations: Conversations;
export let memories: MemoryStore;
export let conversationId: string;
export let changed: number[][];

/** Opens the database for the calling test file and resets it before each of its tests. */
export function useGraphStore(): void {
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-graph-'));
    db = await openDatabase(dir, { template: new Blob([fs.readFileSync(inject('dbTemplatePath'))]) });
  });

  afterAll(async () => {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  beforeEach(async () => {
    await db.exec(RESET);
    changed = [];
    conversations = new Conversations(db);
    memories = new MemoryStore(db);
    store = new EntityStore(
      db,
      { conversations, memories },
      () => {},
      (ids) => changed.push(ids),
    );
    conversationId = (await conversations.create('graph test')).id;
  });
}

export async function say(content: string, at?: Date): Promise<string> {
  const m = await conversations.append({ conversationId, role: 'user', content, status: 'complete', createdAt: at });
  await store.recordMentions({ messageId: m.id, text: content });
  return m.id;
}

export async function byName(name: string): Promise<Entity> {
  const r = await store.resolve(name);
  if (!r.entity) throw new Error(`no entity for ${name}`);
  return r.entity;
}

export async function count(sql: string, params: unknown[] = []): Promise<number> {
  return (await db.query<{ n: number }>(sql, params)).rows[0]!.n;
}

export async function weight(a: number, b: number): Promise<number | null> {
  const row = (
    await db.query<{ weight: number }>(`SELECT weight FROM entity_edges WHERE relation = 'co_mention' AND source_id = $1 AND target_id = $2`, [
      Math.min(a, b),
      Math.max(a, b),
    ])
  ).rows[0];
  return row ? Number(row.weight) : null;
}

/** Every row of the graph tables, to show a refused change left nothing behind. */
export async function snapshot(): Promise<string> {
  const tables = ['entities', 'entity_aliases', 'entity_mentions', 'entity_edges', 'entity_changes', 'entity_ambiguities'];
  const out: unknown[] = [];
  for (const t of tables) out.push((await db.query(`SELECT * FROM ${t} ORDER BY 1, 2`)).rows);
  return JSON.stringify(out);
}
