// The journal's own reasons as codes: the store writes a code and its values, reading gives the code
// and the English words; a reason in words and a row from before codes read back exactly as stored.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MemoryChange, MemoryReason } from '../../shared/api.js';
import type { Database } from '../db/open.js';
import { openTestDatabase } from '../testing/host.js';
import { decodeReason, encodeReason, reasonWords } from './reasons.js';
import { MemoryStore } from './store.js';

let db: Database;
let dir: string;
let store: MemoryStore;
const announced: MemoryChange[] = [];

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-memory-reasons-'));
  db = await openTestDatabase(dir);
  store = new MemoryStore(
    db,
    (c) => announced.push(c),
    () => {},
  );
}, 60_000);

afterAll(async () => {
  await db?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('journal reasons', () => {
  it('decodes only the codes it knows; anything else is the stored text', () => {
    expect(decodeReason(encodeReason({ code: 'same_slot', memoryId: 4 }))).toEqual({
      reason: 'replaces memory 4: the same slot, a new value',
      reasonCode: { code: 'same_slot', memoryId: 4 },
    });
    for (const stored of [null, 'undo of change 3 (update)', '{"code":"same_slot"}', '{"code":"somewhere_new","x":1}', '{"code": broken']) {
      expect(decodeReason(stored)).toEqual({ reason: stored });
    }
  });

  it('reads the sleep’s own sentences as codes, and a code’s English words are the sentence the sleep wrote', () => {
    const sentences: [string, MemoryReason][] = [
      ['nap of 2026-12-05', { code: 'nap', day: '2026-12-05' }],
      ['light sleep of 2026-12-04', { code: 'light_sleep', days: ['2026-12-04'] }],
      ['light sleep of 2026-12-04, 2026-12-03, 2024-02-29', { code: 'light_sleep', days: ['2026-12-04', '2026-12-03', '2024-02-29'] }],
      ['reading imported history of 2019-03-01, 2019-03-02', { code: 'imported_history', days: ['2019-03-01', '2019-03-02'] }],
      ['split from memory 12', { code: 'split', memoryId: 12 }],
      [
        'split into #13, #14: it says where she lives and where she works',
        { code: 'split_into', memoryIds: [13, 14], why: 'it says where she lives and where she works' },
      ],
      ['merge of #1, #2: both say the same', { code: 'merge', memoryIds: [1, 2], why: 'both say the same' }],
      ['merge of #7, #3, #9: the same trip: Lisbon, May', { code: 'merge', memoryIds: [7, 3, 9], why: 'the same trip: Lisbon, May' }],
      ['merged into #15', { code: 'merged_into', memoryId: 15 }],
      ['profile of Ines (entity 4), from #3, #2, #1', { code: 'profile', name: 'Ines', entityId: 4, memoryIds: [3, 2, 1] }],
      ['profile of Dr. Ana (Lisbon) (entity 9), from #5', { code: 'profile', name: 'Dr. Ana (Lisbon)', entityId: 9, memoryIds: [5] }],
    ];
    for (const [stored, reasonCode] of sentences) {
      expect(decodeReason(stored)).toEqual({ reason: stored, reasonCode });
      expect(reasonWords(reasonCode)).toBe(stored);
      expect(encodeReason(reasonCode)).toBe(stored);
    }
  });

  it('a sentence that is not exactly the sleep’s stays words, without a code', () => {
    for (const stored of [
      'nap of 2026-02-30',
      'nap of 2026-13-01',
      'nap of 2026-12-5',
      'nap of 2026-12-05 ',
      'a nap of 2026-12-05',
      'nap of 2026-12-05, 2026-12-06',
      'nap of ',
      'light sleep of',
      'light sleep of ',
      'light sleep of 2026-12-04,2026-12-03',
      'light sleep of 2026-12-04, 2026-12-32',
      'light sleep of 2026-12-04 and more',
      'Light sleep of 2026-12-04',
      'reading imported history of yesterday',
      'split from memory 0',
      'split from memory 012',
      'split from memory -3',
      'split from memory #12',
      'split from memory 12.5',
      'split from memory 9007199254740993',
      'split from memory',
      'split into #13, #14',
      'split into #13, #14: ',
      'merge of #1: only one',
      'merge of #1, #2',
      'merge of #1, #2:',
      'merge of #1, #2: ',
      'merge of 1, 2: no hashes',
      'merge of #1, #0: a zero',
      'merged into 15',
      'merged into #15 and #16',
      'profile of Ines (entity 4)',
      'profile of Ines (entity 4), from ',
      'profile of Ines, from #3',
      'profile of (entity 4), from #3',
      'profile of Ines (entity 0), from #3',
      'profile of Ines (entity 4), from #3, #2, #1 and more',
    ]) {
      expect(decodeReason(stored), stored).toEqual({ reason: stored });
    }
  });

  it('the store journals codes; the history carries them with English words, and a legacy row shows as stored', async () => {
    const first = await store.create({ type: 'world', content: 'Ines lives in Lisbon.', source: 'user', actor: 'person' });
    const again = await store.create({ type: 'world', content: 'Ines lives in Lisbon', source: 'tool', actor: 'companion' });
    expect(again.outcome).toBe('updated');
    const moved = await store.create({ type: 'world', content: 'Ines lives in Porto.', source: 'user', actor: 'person' });
    expect(moved.superseded).toBe(first.memory.id);
    const edited = await store.update(moved.memory.id, { content: 'Ines lives in Faro.' }, 'person');
    await store.undo(edited.changeId, 'person');

    const raw = await db.query<{ reason: string | null }>('SELECT reason FROM memory_changes WHERE reason IS NOT NULL ORDER BY id');
    for (const r of raw.rows) expect(JSON.parse(r.reason!)).toHaveProperty('code');

    const old = await store.get(first.memory.id);
    expect(old.history.map((c) => c.reasonCode ?? null)).toEqual([null, { code: 'near_duplicate' }, { code: 'same_slot', memoryId: first.memory.id }]);
    expect(old.history[1]!.reason).toBe('saved again: near-duplicate of an active memory');
    const edit = (await store.get(moved.memory.id)).history.find((c) => c.action === 'supersede')!;
    expect(edit.reasonCode).toEqual({ code: 'edited_new_value', memoryId: moved.memory.id });
    expect(edit.reason).toBe(`edited to a new value: replaces memory ${moved.memory.id}`);
    const undo = announced.find((c) => c.action === 'undo')!;
    expect(undo.reasonCode).toMatchObject({ code: 'undo', changeId: expect.any(Number), action: expect.any(String) });

    // The morning digest reads its changes with their text: the codes come along, so it says them in the window's language.
    const withText = await store.changesWithText(old.history.map((c) => c.id));
    expect(withText.map((c) => c.reasonCode ?? null)).toEqual([null, { code: 'near_duplicate' }, { code: 'same_slot', memoryId: first.memory.id }]);

    // The sleep's sentence, stored as it wrote it, comes back with its code.
    const slept = await store.create({
      type: 'world',
      content: 'Ines swims on Sundays.',
      source: 'light-sleep',
      actor: 'light-sleep',
      reason: 'light sleep of 2026-12-04, 2026-12-05',
    });
    const sleptHistory = (await store.get(slept.memory.id)).history;
    expect(sleptHistory[0]).toMatchObject({
      reason: 'light sleep of 2026-12-04, 2026-12-05',
      reasonCode: { code: 'light_sleep', days: ['2026-12-04', '2026-12-05'] },
    });
    expect((await store.changesWithText([sleptHistory[0]!.id]))[0]!.reasonCode).toEqual({ code: 'light_sleep', days: ['2026-12-04', '2026-12-05'] });

    // A row from before codes (and a reason another room wrote in words) reads back exactly as stored.
    await db.query(`UPDATE memory_changes SET reason = $2 WHERE id = $1`, [old.history[1]!.id, 'saved again: near-duplicate of an active memory']);
    const legacy = (await store.get(first.memory.id)).history[1]!;
    expect(legacy.reason).toBe('saved again: near-duplicate of an active memory');
    expect(legacy.reasonCode).toBeUndefined();
  });
});
