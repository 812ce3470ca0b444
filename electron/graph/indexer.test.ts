import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { openDatabase, type Database } from '../db/open.js';
import { Conversations } from '../conversations/conversations.js';
import { MemoryStore } from '../memory/store.js';
import { nextEvent, startTestHost, tempDataDir } from '../testing/host.js';
import { batchedEntityChanges, GraphIndexer } from './indexer.js';
import { EntityStore } from './store.js';

const template = () => new Blob([fs.readFileSync(inject('dbTemplatePath'))]);

const RESET = `
  DELETE FROM entity_changes; DELETE FROM entity_ambiguities; DELETE FROM entity_edges; DELETE FROM entity_mentions;
  DELETE FROM entity_scans; DELETE FROM entity_aliases; DELETE FROM entities WHERE id > 2;
  DELETE FROM memory_references; DELETE FROM memory_changes; DELETE FROM memories; DELETE FROM messages; DELETE FROM conversations;`;

async function names(db: Database): Promise<string[]> {
  return (await db.query<{ name: string }>('SELECT name FROM entities WHERE id > 2 ORDER BY name')).rows.map((r) => r.name);
}

describe('GraphIndexer', () => {
  let db: Database;
  let dir: string;
  let logs: string[];
  let indexer: GraphIndexer;
  let conversations: Conversations;
  let memories: MemoryStore;
  let conversationId: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-graph-indexer-'));
    db = await openDatabase(dir, { template: template() });
  });

  afterAll(async () => {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  beforeEach(async () => {
    await db.exec(RESET);
    logs = [];
    const log = (level: string, message: string) => logs.push(`${level}: ${message}`);
    conversations = new Conversations(db, (m) => indexer.message(m.id));
    memories = new MemoryStore(db, (c) => indexer.memoryChanged(c));
    indexer = new GraphIndexer(db, new EntityStore(db, { conversations, memories }, log), log);
    conversationId = (await conversations.create('t')).id;
  });

  it('records a stored message right after the write, not inside it', async () => {
    const message = await conversations.append({ conversationId, role: 'user', content: 'Ana moved to Lisbon.', status: 'complete' });
    // The write returned before anything was recorded.
    expect(await names(db)).toEqual([]);
    await indexer.idle();
    expect(await names(db)).toEqual(['Ana', 'Lisbon']);
    expect((await db.query('SELECT 1 FROM entity_scans WHERE message_id = $1', [message.id])).rows.length).toBe(1);
  });

  it('waits for a streaming reply to finish', async () => {
    const placeholder = await conversations.append({ conversationId, role: 'assistant', content: '', status: 'streaming' });
    await conversations.saveProgress(placeholder.id, 'Say hi to Tom');
    await indexer.idle();
    expect(await names(db)).toEqual([]);
    await conversations.finish(placeholder.id, { content: 'Say hi to Tom in Porto!', status: 'complete', error: null, model: 'm' });
    await indexer.idle();
    expect(await names(db)).toEqual(['Porto', 'Tom']);
  });

  it('records memories with their given names, and again when their words change', async () => {
    const { memory } = await memories.create({
      type: 'world',
      content: 'Ana works at Nimbus Labs.',
      source: 'light-sleep',
      actor: 'light-sleep',
      entityNames: ['Ana', 'Mara'],
    });
    await indexer.idle();
    expect(await names(db)).toEqual(['Ana', 'Mara', 'Nimbus Labs']);
    // A rewording (a new value for "works at" alone would be a new memory superseding this one).
    await memories.update(memory.id, { content: 'Ana, who lives in Porto, works at Orbit Co.' }, 'person');
    await indexer.idle();
    const rows = await db.query<{ name: string }>(
      'SELECT e.name FROM entity_mentions m JOIN entities e ON e.id = m.entity_id WHERE m.memory_id = $1 ORDER BY e.name',
      [memory.id],
    );
    expect(rows.rows.map((r) => r.name)).toEqual(['Ana', 'Mara', 'Orbit Co', 'Porto']);
  });

  it('logs a failure and goes on; the write never sees it', async () => {
    const failing = {
      sources: { conversations, memories },
      recordMentionsBatch: async () => {
        throw new Error('disk on fire');
      },
    } as unknown as EntityStore;
    const broken = new GraphIndexer(db, failing, (level, message) => logs.push(`${level}: ${message}`));
    const chat = new Conversations(db, (m) => broken.message(m.id));
    const a = await chat.append({ conversationId, role: 'user', content: 'Ana.', status: 'complete' });
    await chat.append({ conversationId, role: 'user', content: 'Tom.', status: 'complete' });
    expect(a.content).toBe('Ana.');
    await broken.idle();
    expect(broken.stats.failed).toBe(2);
    expect(logs.filter((l) => l.includes('disk on fire'))).toHaveLength(2);
    expect(logs[0]).toMatch(/^warn: graph: could not record the mentions of message/);
  });

  it('backfills what was written without it, including entity_names, once', async () => {
    const plain = new Conversations(db);
    const plainMemories = new MemoryStore(db);
    for (const text of ['Caroline went to a support group.', 'Melanie painted a lake in Oregon.', 'no names here']) {
      await plain.append({ conversationId, role: 'user', content: text, status: 'complete' });
    }
    await plainMemories.create({
      type: 'world',
      content: 'The person has a sister.',
      source: 'light-sleep',
      actor: 'light-sleep',
      entityNames: ['Mara', 'Shanghai'],
    });
    expect(await indexer.backfill()).toEqual({ messages: 3, memories: 1 });
    expect(await names(db)).toEqual(['Caroline', 'Mara', 'Melanie', 'Oregon', 'Shanghai']);
    expect(await indexer.backfill()).toEqual({ messages: 0, memories: 0 });
    // A memory changed after its scan is read again.
    const { rows } = await db.query<{ id: number }>('SELECT id FROM memories');
    await plainMemories.update(rows[0]!.id, { content: 'The person has a sister in Shanghai.' }, 'person');
    expect(await indexer.backfill()).toEqual({ messages: 0, memories: 1 });
  });
});

describe('batchedEntityChanges', () => {
  it('reports the ids gathered over a moment once', async () => {
    const reports: number[][] = [];
    const note = batchedEntityChanges((ids) => reports.push(ids.sort()), 20);
    note([3, 4]);
    note([4, 5]);
    expect(reports).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    note([6]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(reports).toEqual([[3, 4, 5], [6]]);
  });
});

describe('in the host', () => {
  it('backfills at start and records new memories as they are written', async () => {
    const dataDir = tempDataDir();
    // Written by a version without the graph: no scans, names only in entity_names.
    {
      const db = await openDatabase(dataDir, { template: template() });
      await db.exec(RESET);
      const conversations = new Conversations(db);
      const { id } = await conversations.create('before');
      await conversations.append({ conversationId: id, role: 'user', content: 'Hey Caroline! How is Lisbon?', status: 'complete' });
      await new MemoryStore(db).create({
        type: 'world',
        content: 'The person has a sister.',
        source: 'light-sleep',
        actor: 'light-sleep',
        entityNames: ['Mara'],
      });
      await db.close();
    }
    const logs: string[] = [];
    let backfilled!: () => void;
    const done = new Promise<void>((resolve) => (backfilled = resolve));
    const host = await startTestHost({
      dataDir,
      log: (level, message) => {
        logs.push(`${level}: ${message}`);
        if (message.startsWith('graph: read')) backfilled();
      },
    });
    try {
      await done;
      expect(logs).toContain('info: graph: read 1 earlier messages and 1 memories for entity mentions');
      // The backfill's own graph.changed may still be on its way: wait for the one naming Ana.
      const ana = async () => (await host.api['graph.search']({ query: 'Ana' })).find((e) => e.name === 'Ana');
      const event = nextEvent(host, 'graph.changed', (p: { entityIds: number[] }) => p.entityIds.length > 0);
      await host.api['memories.create']({ type: 'world', content: 'Ana moved to Porto.' });
      expect(await event).toEqual({ entityIds: expect.any(Array) });
      for (const until = Date.now() + 20_000; !(await ana()) && Date.now() < until;) await new Promise((r) => setTimeout(r, 50));
    } finally {
      await host.close();
    }
    const db = await openDatabase(dataDir);
    try {
      expect(await names(db)).toEqual(['Ana', 'Caroline', 'Lisbon', 'Mara', 'Porto']);
    } finally {
      await db.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
