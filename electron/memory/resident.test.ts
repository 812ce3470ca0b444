import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { estimateTokens } from '../llm/context.js';
import { openDatabase, type Database } from '../db/open.js';
import { buildResident, RESIDENT_HEADING } from './resident.js';

// DELETE and an identity restart: several times faster than TRUNCATE on PGlite, and ids start at 1.
const RESET = `DELETE FROM memory_references; DELETE FROM memory_changes; DELETE FROM memories;
  ALTER TABLE memories ALTER COLUMN id RESTART; ALTER TABLE memory_changes ALTER COLUMN id RESTART;`;

let db: Database;
let dir: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-resident-'));
  db = await openDatabase(dir, { template: new Blob([fs.readFileSync(inject('dbTemplatePath'))]) });
});

afterAll(async () => {
  await db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  await db.exec(RESET);
});

/** Seeds rows directly, in one statement: the resident block reads the table, however the rows got there. */
async function seed(rows: { content: string; type?: string; pinned?: number; refs?: number; status?: string }[]): Promise<number[]> {
  const res = await db.query<{ id: number }>(
    `INSERT INTO memories (type, content, pinned, pin_order, reference_count, status, source, updated_at)
     SELECT t, c, p IS NOT NULL, p, r, s, 'user', now() + n * interval '1 ms'
     FROM unnest($1::text[], $2::text[], $3::int[], $4::int[], $5::text[]) WITH ORDINALITY AS u(t, c, p, r, s, n)
     ORDER BY n RETURNING id`,
    [
      rows.map((r) => r.type ?? 'world'),
      rows.map((r) => r.content),
      rows.map((r) => r.pinned ?? null),
      rows.map((r) => r.refs ?? 0),
      rows.map((r) => r.status ?? 'active'),
    ],
  );
  return res.rows.map((r) => Number(r.id));
}

describe('buildResident', () => {
  it('carries at most 40 pinned, warns about the rest, then the top N by references', async () => {
    // Pin orders run backwards against insertion, so the block must follow pin order, not ids.
    const pinned = await seed(Array.from({ length: 45 }, (_, i) => ({ content: `Pinned fact ${i + 1}.`, pinned: 45 - i })));
    const [low, high, mid, never, forgotten, superseded, fourth] = await seed([
      { content: 'Referenced once.', refs: 1 },
      { content: 'Referenced\n  often,\tacross lines.', type: 'preference', refs: 9 },
      { content: 'Referenced sometimes.', refs: 4 },
      { content: 'Never referenced.' },
      { content: 'Forgotten but much cited.', refs: 50, status: 'expired' },
      { content: 'Superseded but much cited.', refs: 50, status: 'superseded' },
      { content: 'Also referenced once.', refs: 1 },
    ]);
    const logs: string[] = [];
    const resident = await buildResident(db, { topN: 3, log: (level, msg) => logs.push(`${level}: ${msg}`) });

    const keptPinned = [...pinned].reverse().slice(0, 40);
    expect(resident.ids).toEqual([...keptPinned, high, mid, fourth]);
    expect([resident.pinned, resident.referenced, resident.pinnedCut]).toEqual([40, 3, 5]);
    expect(logs).toEqual(['warn: resident memory: 45 memories are pinned, only the first 40 are carried; 5 left out until some are unpinned']);

    const lines = resident.text.split('\n');
    expect(lines[0]).toBe(RESIDENT_HEADING);
    expect(lines.length).toBe(1 + 40 + 3);
    expect(lines[1]).toBe(`- (world) Pinned fact 45. [[anima:${pinned[44]}]]`);
    expect(lines[40]).toBe(`- (world) Pinned fact 6. [[anima:${pinned[5]}]]`);
    expect(lines.slice(41)).toEqual([
      `- (preference) Referenced often, across lines. [[anima:${high}]]`,
      `- (world) Referenced sometimes. [[anima:${mid}]]`,
      `- (world) Also referenced once. [[anima:${fourth}]]`,
    ]);
    expect(resident.text).not.toContain(`[[anima:${low}]]`);
    for (const id of [never, forgotten, superseded]) expect(resident.ids).not.toContain(id);
    expect(resident.chars).toBe(resident.text.length);
    expect(resident.estimatedTokens).toBe(estimateTokens(resident.text));
  });

  it('lists a pinned memory once even when it is also the most referenced', async () => {
    const [pinnedAndCited, cited] = await seed([
      { content: 'Pinned and cited.', pinned: 1, refs: 30 },
      { content: 'Only cited.', refs: 2 },
    ]);
    const resident = await buildResident(db, { topN: 20 });
    expect(resident.ids).toEqual([pinnedAndCited, cited]);
    expect([resident.pinned, resident.referenced, resident.pinnedCut]).toEqual([1, 1, 0]);
  });

  it('carries only pinned memories when topN is 0, and nothing at all when there is nothing', async () => {
    expect(await buildResident(db, { topN: 20 })).toEqual({
      text: '',
      chars: 0,
      estimatedTokens: 0,
      pinned: 0,
      referenced: 0,
      pinnedCut: 0,
      ids: [],
    });
    const [p] = await seed([
      { content: 'Pinned.', pinned: 1 },
      { content: 'Cited.', refs: 5 },
    ]);
    const logs: string[] = [];
    const resident = await buildResident(db, { topN: 0, log: (_l, m) => logs.push(m) });
    expect(resident.text).toBe(`${RESIDENT_HEADING}\n- (world) Pinned. [[anima:${p}]]`);
    expect(logs).toEqual([]);
  });
});
