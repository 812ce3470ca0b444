// A pin proposal's reason as a code: written as a code with its values, read back with the code and the
// English words; a row from before codes, a foreign code and a code with bad values read back as stored.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProposalReason } from '../../shared/api/sleep.js';
import type { Database } from '../db/open.js';
import { MemoryStore } from '../memory/store.js';
import { openTestDatabase } from '../testing/host.js';
import { decodeProposalReason, encodeProposalReason } from './proposal-reasons.js';
import { proposal } from './read.js';

const MALFORMED = [
  'not used since 2026-11-02',
  'pinned, but never used in a reply',
  '{"code":"unused_since","day":"2026-11-02T08:00:00Z"}',
  '{"code":"unused_since","day":"2026-02-30"}',
  '{"code":"unused_since","day":"<img src=x onerror=alert(1)>"}',
  '{"code":"unused_since"}',
  '{"code":"carried_uncited","days":30}',
  '{"code":"carried_uncited","days":30,"shown":-1}',
  '{"code":"carried_uncited","days":"30","shown":50}',
  '{"code":"much_used","replies":2.5}',
  '{"code":"much_used","replies":1e300}',
  '{"code":"much_used","replies":null}',
  '{"code":"somewhere_new","replies":5}',
  '{"code":"much_used", broken',
  '{"code":null}',
];

describe('proposal reasons', () => {
  it('reads each code back with its values and the English words it was stored as before codes', () => {
    const words: [ProposalReason, string][] = [
      [{ code: 'unused_since', day: '2026-11-02' }, 'not used since 2026-11-02'],
      [{ code: 'never_used' }, 'pinned, but never used in a reply'],
      [{ code: 'carried_uncited', days: 30, shown: 50 }, 'carried for 30 days and shown 50 times, never cited'],
      [{ code: 'much_used', replies: 5 }, 'used in 5 replies'],
    ];
    for (const [reasonCode, reason] of words) {
      const stored = encodeProposalReason(reasonCode);
      expect(JSON.parse(stored)).toEqual(reasonCode);
      expect(decodeProposalReason(stored)).toEqual({ reason, reasonCode });
    }
  });

  it('reads an old row, a foreign code and a code with bad values exactly as stored, with no code', () => {
    for (const stored of MALFORMED) expect(decodeProposalReason(stored)).toEqual({ reason: stored, reasonCode: null });
  });

  it('keeps only the values it knows from a stored code', () => {
    expect(decodeProposalReason('{"code":"much_used","replies":7,"note":"<b>extra</b>"}')).toEqual({
      reason: 'used in 7 replies',
      reasonCode: { code: 'much_used', replies: 7 },
    });
  });
});

const FACTS = [
  'Ines plays the cello on Sundays.',
  'The boiler was serviced in March.',
  'Tomas is allergic to peanuts.',
  'The bakery on Rua Augusta closes at noon.',
  'Mara prefers green tea to coffee.',
  'The car needs new winter tyres.',
  'Leo started learning Japanese last spring.',
  'The library card expires in June.',
  'Grandmother grew up near the coast in Galicia.',
  'The wifi password is written inside the cupboard door.',
  'Sofia runs a half marathon every autumn.',
  'The dentist moved her practice to the old post office.',
  'Ravi collects vintage fountain pens.',
  'The balcony tomatoes ripen late in August.',
  'Nora is afraid of thunderstorms.',
  'The quarterly tax return is due at the end of April.',
];

describe('proposals read from the database', () => {
  let db: Database;
  let dir: string;
  let memories: MemoryStore;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-proposal-reasons-'));
    db = await openTestDatabase(dir);
    memories = new MemoryStore(
      db,
      () => {},
      () => {},
    );
  }, 60_000);

  afterAll(async () => {
    await db?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('carry the code beside the words, and an old or malformed row as stored', async () => {
    const run = (
      await db.query<{ id: number }>(
        `INSERT INTO sleep_runs (sleep_day, trigger, holder_pid, holder_host, status) VALUES ('2026-12-01', 'manual', 1, 'x', 'done') RETURNING id::int AS id`,
      )
    ).rows[0]!.id;
    const stored = [encodeProposalReason({ code: 'carried_uncited', days: 30, shown: 50 }), ...MALFORMED];
    const ids: number[] = [];
    for (const [i, reason] of stored.entries()) {
      const { memory, outcome } = await memories.create({ type: 'world', content: FACTS[i]!, source: 'user', actor: 'person' });
      expect(outcome).toBe('created');
      const row = await db.query<{ id: number }>(
        `INSERT INTO sleep_proposals (run_id, memory_id, action, reason) VALUES ($1, $2, 'unpin', $3) RETURNING id::int AS id`,
        [run, memory.id, reason],
      );
      ids.push(row.rows[0]!.id);
    }
    const [coded, ...rest] = await Promise.all(ids.map((id) => proposal(db, memories, id)));
    expect(coded).toMatchObject({
      reason: 'carried for 30 days and shown 50 times, never cited',
      reasonCode: { code: 'carried_uncited', days: 30, shown: 50 },
    });
    expect(rest.map((p) => ({ reason: p.reason, reasonCode: p.reasonCode }))).toEqual(MALFORMED.map((reason) => ({ reason, reasonCode: null })));
  });
});
