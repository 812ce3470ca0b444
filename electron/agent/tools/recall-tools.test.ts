import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../db/open.js';
import { Conversations } from '../../conversations/conversations.js';
import { MemoryStore } from '../../memory/store.js';
import { dbTemplate, tempDataDir } from '../../testing/host.js';
import { Recall } from '../../memory/recall/index.js';
import { recallTools } from './recall-tools.js';
import { toolRegistry } from './registry.js';

let db: Database;
let recall: Recall;
let dir: string;
let lisbon: number;
let tea: number;
const tools = () => new Map(recallTools(db, recall).map((t) => [t.spec.name, t]));

beforeAll(async () => {
  dir = tempDataDir('anima-recall-tools-');
  db = await openDatabase(dir, { template: dbTemplate() });
  recall = new Recall({ db });
  const store = new MemoryStore(db);
  lisbon = (await store.create({ type: 'world', content: 'Mara lives in Lisbon.', source: 'user', actor: 'person' })).memory.id;
  tea = (await store.create({ type: 'preference', content: 'Mara prefers green tea.', source: 'user', actor: 'person' })).memory.id;
  const conversations = new Conversations(db);
  const c = await conversations.create('Trip');
  const at = new Date('2024-05-01T09:00:00Z');
  await conversations.append({ conversationId: c.id, role: 'user', content: 'We should visit Lisbon in spring.', status: 'complete', createdAt: at });
  await conversations.append({ conversationId: c.id, role: 'assistant', content: 'Spring sounds lovely.', status: 'complete', createdAt: at });
  await db.query(`INSERT INTO diary_blocks (day, kind, title, body) VALUES ('2024-05-01', 'anchor', NULL, 'Talking about Lisbon felt hopeful.')`);
});

afterAll(async () => {
  await db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('recall tools', () => {
  it('describe the citation rule', () => {
    const t = tools();
    expect([...t.keys()]).toEqual(['memory_recall', 'memory_semantic_search']);
    for (const tool of t.values()) {
      expect(tool.spec.description).toContain('[[anima:');
      expect(tool.spec.parameters).toMatchObject({ type: 'object', required: ['query'] });
    }
    expect(t.get('memory_recall')!.spec.description).toContain('Session (past conversation), limbic and autobiographical (diary) hits have no marker');
  });

  it('memory_recall lists every source, and only semantic hits carry [[anima:ID]]', async () => {
    const out = await tools().get('memory_recall')!.run({ query: 'Lisbon' });
    const lines = out.split('\n');
    expect(lines[0]).toBe('4 hits, best first:');
    const semantic = lines.filter((l) => l.includes('[semantic'));
    expect(semantic).toEqual([
      expect.stringMatching(new RegExp(`^\\d\\. \\[semantic · world · \\d{4}-\\d\\d-\\d\\d\\] Mara lives in Lisbon\\. \\[\\[anima:${lisbon}\\]\\]$`)),
    ]);
    // each source's best scores 1; ties go semantic, session, limbic, autobiographical
    expect(lines[1]).toMatch(/^1\. \[semantic/);
    expect(lines[2]).toBe('2. [session · 2024-05-01 · the person said] We should visit Lisbon in spring.');
    expect(lines[3]).toBe('3. [limbic · anchor · 2024-05-01] Talking about Lisbon felt hopeful.');
    expect(lines[4]).toBe('4. [session · 2024-05-01 · you said] Spring sounds lovely.');
    expect(lines.filter((l) => l.includes('[session')).length).toBe(2);
    expect(lines.some((l) => l.includes('you said] Spring sounds lovely.'))).toBe(true);
    expect(lines.some((l) => /\[limbic · anchor · 2024-05-01\] Talking about Lisbon felt hopeful\.$/.test(l))).toBe(true);
    expect(lines.filter((l) => l.includes('[[anima:')).length).toBe(1);
  });

  it('memory_recall restricts sources and limits', async () => {
    const out = await tools()
      .get('memory_recall')!
      .run({ query: 'Lisbon', memory_types: ['limbic'], limit: 5 });
    expect(out).toBe('1 hit, best first:\n1. [limbic · anchor · 2024-05-01] Talking about Lisbon felt hopeful.');
    expect((await tools().get('memory_recall')!.run({ query: 'Lisbon', limit: 1 })).split('\n')).toHaveLength(2);
  });

  it('memory_semantic_search shows ids as [[anima:ID]] and filters by type', async () => {
    const t = tools().get('memory_semantic_search')!;
    const out = await t.run({ query: 'Mara' });
    expect(out.split('\n')[0]).toBe('2 hits, best first:');
    expect(out).toContain(`[[anima:${lisbon}]]`);
    expect(out).toContain(`[[anima:${tea}]]`);
    const prefs = await t.run({ query: 'Mara', types: ['preference'] });
    expect(prefs).toMatch(new RegExp(`^1 hit, best first:\\n1\\. \\[semantic · preference · [\\d-]+\\] Mara prefers green tea\\. \\[\\[anima:${tea}\\]\\]$`));
    expect(await t.run({ query: 'zebra' })).toBe('No memories matched.');
  });

  it('answers bad arguments with an error in words, and searches nothing', async () => {
    const r = tools().get('memory_recall')!;
    const s = tools().get('memory_semantic_search')!;
    expect(await r.run({})).toBe('Error: query is required: the words to look for.');
    expect(await r.run({ query: '   ' })).toBe('Error: query is required: the words to look for.');
    expect(await r.run({ query: 42 })).toBe('Error: query is required: the words to look for.');
    expect(await r.run({ query: 'Lisbon', limit: 0 })).toBe('Error: limit must be a whole number from 1 to 50.');
    expect(await r.run({ query: 'Lisbon', limit: 'lots' })).toBe('Error: limit must be a whole number from 1 to 50.');
    expect(await r.run({ query: 'Lisbon', memory_types: ['dreams'] })).toBe(
      'Error: Unknown memory_types "dreams": use semantic, session, limbic, autobiographical.',
    );
    expect(await r.run({ query: 'Lisbon', memory_types: 7 })).toBe(
      'Error: memory_types must be a list drawn from: semantic, session, limbic, autobiographical.',
    );
    expect(await s.run({ query: 'Mara', types: ['fact'] })).toBe(
      'Error: Unknown types "fact": use world, experience, opinion, observation, preference, procedural.',
    );
    expect(await r.run({ query: '?!' })).toBe('Nothing to search for: the query has no searchable words (only punctuation, stop words or operators).');
    expect(await r.run({ query: 'AND NOT' })).toBe('Nothing to search for: the query has no searchable words (only punctuation, stop words or operators).');
    expect(await r.run({ query: "'; DROP TABLE memories; --" })).toBe('No memories matched.');
    expect((await r.run({ query: `Lisbon ${'x '.repeat(60_000)}` })).split('\n')[0]).toBe('4 hits, best first (the query was long: only its start was used):');
    // A string limit a model might send is read as the number it says.
    expect((await s.run({ query: 'Mara', limit: '1' })).split('\n')).toHaveLength(2);
  });

  it('work through the registry', async () => {
    const registry = toolRegistry(recallTools(db, recall));
    expect(registry.specs().map((s) => s.name)).toEqual(['memory_recall', 'memory_semantic_search']);
    const out = await registry.run({ id: 'c1', name: 'memory_semantic_search', arguments: { query: 'Lisbon' } });
    expect(out).toContain(`[[anima:${lisbon}]]`);
  });
});
