// The journal's own reasons as codes: the store writes a code and its values, reading gives the code
// and the English words; a reason in words and a row from before codes read back exactly as stored.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MemoryChange } from '../../shared/api.js';
import type { Database } from '../db/open.js';
import { openTestDatabase } from '../testing/host.js';
import { decodeReason, encodeReason } from './reasons.js';
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
    for (const stored of [
      null,
      'merge of #1, #2: both say the same',
      'undo of change 3 (update)',
      '{"code":"same_slot"}',
      '{"code":"somewhere_new","x":1}',
      '{"code": broken',
    ]) {
      expect(decodeReason(stored)).toEqual({ reason: stored });
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

    // A row from before codes (and a reason another room wrote in words) reads back exactly as stored.
    await db.query(`UPDATE memory_changes SET reason = $2 WHERE id = $1`, [old.history[1]!.id, 'saved again: near-duplicate of an active memory']);
    const legacy = (await store.get(first.memory.id)).history[1]!;
    expect(legacy.reason).toBe('saved again: near-duplicate of an active memory');
    expect(legacy.reasonCode).toBeUndefined();
  });
});
