// A lived-in data folder for the archive's tests: conversations with an edited message, memories with
// a journal and citations, the self layer, a provider with an API key, a diary (every kind, one
// hidden), mood days, entities with aliases and a relation with valid time. Built through the owners'
// own methods where they have one; the diary, mood and citation rows, which only the sleep cycle and
// a reply's markers write, are inserted as those would insert them.
import { SelfLayer } from '../../companion/self-layer.js';
import { Conversations } from '../../conversations/conversations.js';
import type { Database } from '../../db/open.js';
import { EntityStore } from '../../graph/store.js';
import { MemoryStore } from '../../memory/store.js';
import { modelsDir, Providers } from '../../providers/providers.js';
import { OwnerOnlyFileSecretStore } from '../../settings/secrets.js';
import { SettingsStore } from '../../settings/settings.js';

export const SECRET_KEY = 'sk-archive-test-5f2c9e1d7b3a4c6e8f0a1b2c3d4e5f60';

export interface Seeded {
  conversations: number;
  messages: number;
  memories: number;
  memoryChanges: number;
  diaryBlocks: number;
  dreams: number;
  diaryDays: number;
  moodDays: number;
  references: number;
}

export async function seedFolder(db: Database, dataDir: string): Promise<Seeded> {
  const conversations = new Conversations(db);
  const memories = new MemoryStore(db);
  const secrets = new OwnerOnlyFileSecretStore(dataDir);
  const providers = new Providers(db, secrets, { modelsDir: modelsDir(dataDir) });
  await new SelfLayer(db).ensureDefaults();
  await new SettingsStore(db, () => {}).update({ theme: 'dark', language: 'zh-CN' });
  await providers.save({ kind: 'openai-compatible', name: 'Cloud', baseUrl: 'https://api.example.test/v1', model: 'gpt-x', apiKey: SECRET_KEY });

  const a = await conversations.create('Trip to 京都 / ../../etc/passwd');
  const b = await conversations.create('Cooking');
  const day = (d: number, h: number) => new Date(Date.UTC(2026, 10, d, h));
  const m1 = await conversations.append({
    conversationId: a.id,
    role: 'user',
    content: 'I am going to Kyoto next week.',
    status: 'complete',
    createdAt: day(1, 9),
  });
  const m2 = await conversations.append({ conversationId: a.id, role: 'assistant', content: 'Lovely! [[anima:1]]', status: 'complete', createdAt: day(1, 9) });
  // A regenerated reply: the earlier version is kept with replaced_by.
  const m3 = await conversations.append({
    conversationId: a.id,
    role: 'assistant',
    content: 'How exciting — 京都 in autumn!',
    status: 'complete',
    createdAt: day(1, 10),
  });
  await conversations.markReplaced([m2.id], m3.id);
  await conversations.append({
    conversationId: b.id,
    role: 'user',
    content: 'My grandmother’s dumpling recipe uses chives.',
    status: 'complete',
    createdAt: day(2, 18),
  });
  await conversations.append({ conversationId: b.id, role: 'assistant', content: 'Chives and pork, then.', status: 'complete', createdAt: day(2, 18) });

  const k = await memories.create({
    type: 'experience',
    content: 'The person is travelling to Kyoto in November 2026.',
    source: 'tool',
    actor: 'companion',
    sourceMessageIds: [m1.id],
  });
  const kid = k.memory.id;
  await memories.update(kid, { content: 'The person is travelling to 京都 (Kyoto) in November 2026.' }, 'person', 'more precise');
  const p = await memories.create({
    type: 'preference',
    content: 'The person likes dumplings with chives.',
    source: 'light-sleep',
    actor: 'light-sleep',
    validFrom: '2026-11-02',
  });
  const w = await memories.create({ type: 'world', content: 'Kyoto was the capital of Japan for over a thousand years.', source: 'tool', actor: 'companion' });
  await memories.forget(w.memory.id, 'person', 'not about me');
  await memories.pin(p.memory.id, true, 'person');

  await db.query('INSERT INTO memory_references (message_id, memory_id) VALUES ($1, $2)', [m2.id, kid]);
  const insertBlock = (d: string, kind: string, title: string | null, body: string, conversationId: string | null = null) =>
    db.query<{ id: number }>(
      `INSERT INTO diary_blocks (day, kind, conversation_id, title, body, mood) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id::int AS id`,
      [d, kind, conversationId, title, body, kind === 'anchor' ? { valence: 0.6, arousal: 0.4 } : null],
    );
  await insertBlock('2026-11-01', 'anchor', 'Kyoto plans', 'Excited about the trip.', a.id);
  await insertBlock('2026-11-01', 'imprint', null, 'Autumn leaves matter to them.');
  await insertBlock('2026-11-01', 'narrative', 'A day of plans', 'We talked about Kyoto.');
  await insertBlock('2026-11-01', 'dream', '红叶の夢', 'Walking through red maples.');
  await insertBlock('2026-11-02', 'anchor', 'Dumplings', 'A family recipe.', b.id);
  await insertBlock('2026-11-02', 'digest', 'What changed', '2 memories saved.');
  const hidden = await insertBlock('2026-11-02', 'imprint', 'Hidden one', 'Should not be in the vault.');
  await db.query('UPDATE diary_blocks SET hidden_at = now() WHERE id = $1', [hidden.rows[0]?.id]);
  await db.query(
    `INSERT INTO mood_days (day, valence, arousal, anchors, valence7, valence30, arousal7, arousal30)
     VALUES ('2026-11-01', 0.6, 0.4, 1, 0.6, 0.6, 0.4, 0.4), ('2026-11-02', 0.3, 0.2, 1, 0.45, 0.45, 0.3, 0.3)`,
  );

  const graph = new EntityStore(db, { conversations, memories }, () => {});
  await graph.importGraph({
    entities: [
      { name: 'Ana', kind: 'person', aliases: ['Annie'] },
      { name: 'Kyoto', kind: 'place', aliases: ['京都'] },
    ],
    edges: [{ source: 0, target: 1, relation: 'lives_in', validFrom: '2020-01-01', validTo: '2025-06-30' }],
  });

  return {
    conversations: 2,
    messages: 5,
    memories: 3,
    memoryChanges: 0, // read from the database by the test
    diaryBlocks: 7,
    dreams: 1,
    diaryDays: 2,
    moodDays: 2,
    references: 1,
  };
}
