import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../db/open.js';
import { dbTemplate, tempDataDir } from '../testing/host.js';
import { Conversations } from './conversations.js';
import { importLocomo, normaliseEvidence, parseLocomoDate, turnContent } from './import-locomo.js';

describe('LoCoMo parsing', () => {
  it('reads session dates as UTC', () => {
    expect(parseLocomoDate('1:56 pm on 8 May, 2023')!.toISOString()).toBe('2023-05-08T13:56:00.000Z');
    expect(parseLocomoDate('12:10 am on 11 August, 2023')!.toISOString()).toBe('2023-08-11T00:10:00.000Z');
    expect(parseLocomoDate('12:30 pm on 1 Jan, 2024')!.toISOString()).toBe('2024-01-01T12:30:00.000Z');
    expect(parseLocomoDate('sometime')).toBeNull();
    expect(parseLocomoDate(undefined)).toBeNull();
  });

  it('normalises malformed evidence and drops what does not exist', () => {
    const known = new Set(['D8:6', 'D9:17', 'D11:26', 'D30:5']);
    expect(normaliseEvidence(['D8:6; D9:17', 'D:11:26', 'D30:05', 'D', 'D99:1', 'D8:6'], known)).toEqual(['D8:6', 'D9:17', 'D11:26', 'D30:5']);
    expect(normaliseEvidence('D1:1')).toEqual([]);
  });

  it('appends a shared photo’s caption to the turn', () => {
    expect(turnContent({ text: 'Look!', blip_caption: 'a photo of a dog' })).toBe('Look! [shared a photo: a photo of a dog]');
    expect(turnContent({ text: 'Hi' })).toBe('Hi');
  });
});

describe('importLocomo', () => {
  let db: Database;
  let dir: string;
  beforeAll(async () => {
    dir = tempDataDir('anima-locomo-');
    db = await openDatabase(dir, { template: dbTemplate() });
  });
  afterAll(async () => {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('stores each session as a dated conversation through Conversations.appendMany, never the annotations', async () => {
    const conversations = new Conversations(db);
    const file = {
      speaker_a: 'Ana',
      speaker_b: 'Bo',
      session_1_date_time: '1:56 pm on 8 May, 2023',
      session_1: [
        { speaker: 'Ana', dia_id: 'D1:1', text: 'I adopted a puppy!' },
        { speaker: 'Bo', dia_id: 'D1:2', text: 'Show me', img_url: ['x'], blip_caption: 'a small brown dog' },
      ],
      session_2_date_time: '9:00 am on 9 May, 2023',
      session_3_date_time: '10:00 am on 10 May, 2023',
      session_2: [{ speaker: 'Bo', dia_id: 'D2:1', text: 'How is the puppy?' }],
      events_session_1: { Ana: ['SECRET-EVENT adopted a puppy'] },
      session_1_observation: { Ana: [['SECRET-OBSERVATION', 'D1:1']] },
      session_1_summary: 'SECRET-SUMMARY',
      qa: [
        { question: 'What did Ana adopt?', answer: 'a puppy', evidence: ['D1:1'], category: 4 },
        { question: 'Nothing?', evidence: ['D7:7'], category: 5 },
      ],
    };
    const r = await importLocomo(conversations, file);
    expect(r.speakers).toEqual(['Ana', 'Bo']);
    expect(r.messageCount).toBe(3);
    expect(r.conversationIds).toHaveLength(2);
    expect([...r.turns.keys()]).toEqual(['D1:1', 'D1:2', 'D2:1']);
    expect(r.qa).toEqual([
      { question: 'What did Ana adopt?', category: 4, evidence: ['D1:1'] },
      { question: 'Nothing?', category: 5, evidence: [] },
    ]);
    const first = await conversations.get(r.conversationIds[0]!);
    expect(first.title).toBe('Ana & Bo — session 1');
    const messages = await conversations.messages(r.conversationIds[0]!);
    expect(messages.map((m) => [m.role, m.speaker, m.content, m.createdAt])).toEqual([
      ['user', 'Ana', 'I adopted a puppy!', '2023-05-08T13:56:00.000Z'],
      ['user', 'Bo', 'Show me [shared a photo: a small brown dog]', '2023-05-08T13:56:00.000Z'],
    ]);
    expect(messages[0]!.id).toBe(r.turns.get('D1:1')!.messageId);
    const leaked = await db.query(`SELECT 1 FROM messages WHERE content LIKE '%SECRET-%' UNION ALL SELECT 1 FROM conversations WHERE title LIKE '%SECRET-%'`);
    expect(leaked.rows).toEqual([]);
  });

  it('refuses what is not a LoCoMo conversation', async () => {
    const conversations = new Conversations(db);
    await expect(importLocomo(conversations, [])).rejects.toThrow('not a LoCoMo conversation');
    await expect(importLocomo(conversations, { speaker_a: 'A' })).rejects.toThrow('speaker_a, speaker_b and session_N are required');
  });
});
