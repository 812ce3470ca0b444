import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { openDatabase, type Database } from '../../db/open.js';
import { SECRET_REFUSAL } from '../../memory/secret-filter.js';
import { MemoryStore } from '../../memory/store.js';
import { LIST_SUMMARY_CHARS, rememberTool } from './remember.js';

// Fake credentials, one per pattern, assembled at run time so no secret scanner flags this file.
const rnd = (n: number) => Array.from({ length: n }, (_, i) => 'aB3dE6gH9jK2mN5pQ8sT1vW4yZ7'[(i * 7) % 27]).join('');
const SECRETS = [
  `-----BEGIN ${'RSA'} PRIVATE KEY-----`,
  ['sk', 'ant', 'api03', rnd(40)].join('-'),
  `${'sk'}-${rnd(48)}`,
  `${'AK' + 'IA'}QZ7XW3KD9RT2MB5Q`,
  `${'AS' + 'IA'}QZ7XW3KD9RT2MB5Q`,
  `${'gh' + 'p_'}${rnd(36)}`,
  `${'github' + '_pat_'}11ABCDEFGH0_${rnd(60)}`,
  `${'xo' + 'xs'}-${rnd(30)}`,
  `${'AI' + 'za'}${rnd(35)}`,
  `${'gl' + 'pat'}-${rnd(20)}`,
  'api_key=7f3a9c2e71b4aa',
];

// DELETE and an identity restart: several times faster than TRUNCATE on PGlite, and ids start at 1.
const RESET = `DELETE FROM memory_references; DELETE FROM memory_changes; DELETE FROM memories;
  ALTER TABLE memories ALTER COLUMN id RESTART; ALTER TABLE memory_changes ALTER COLUMN id RESTART;`;

let db: Database;
let dir: string;
let store: MemoryStore;
let tool: ReturnType<typeof rememberTool>;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-remember-'));
  db = await openDatabase(dir, { template: new Blob([fs.readFileSync(inject('dbTemplatePath'))]) });
});

afterAll(async () => {
  await db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  await db.exec(RESET);
  store = new MemoryStore(db);
  tool = rememberTool(store, { sourceMessageId: 'msg-1' });
});

async function rows(): Promise<[number, number]> {
  const r = await db.query<{ m: number; c: number }>('SELECT (SELECT count(*)::int FROM memories) AS m, (SELECT count(*)::int FROM memory_changes) AS c');
  return [r.rows[0]!.m, r.rows[0]!.c];
}

describe('remember tool spec', () => {
  it('is one tool with an action enum and the rules in its description', () => {
    expect(tool.spec.name).toBe('remember');
    const params = tool.spec.parameters as { properties: Record<string, { enum?: string[] }>; required: string[] };
    expect(params.properties.action!.enum).toEqual(['save', 'update', 'forget', 'list']);
    expect(params.properties.type!.enum).toEqual(['world', 'experience', 'opinion', 'observation', 'preference', 'procedural']);
    expect(params.required).toEqual(['action']);
    expect(tool.spec.description).toContain('Opinions and preferences are first-person and say whose they are');
    expect(tool.spec.description).toContain('Never save a credential');
    expect(tool.spec.description).toContain('cite it with [[anima:ID]] at the end of your reply');
  });
});

describe('remember tool', () => {
  it('saves, tagging the source message', async () => {
    expect(await tool.run({ action: 'save', type: 'world', content: 'Mara lives in Shanghai.', entityNames: ['Mara', 'Shanghai'] })).toBe(
      'Saved as [[anima:1]].',
    );
    const [m] = await store.getMany([1]);
    expect(m).toMatchObject({ source: 'tool', sourceMessageIds: ['msg-1'], entityNames: ['Mara', 'Shanghai'] });
    expect((await store.get(1)).history[0]!.actor).toBe('companion');
  });

  it('updates a near-duplicate instead of adding a copy, and says so', async () => {
    await tool.run({ action: 'save', type: 'preference', content: 'Mara prefers green tea' });
    expect(await tool.run({ action: 'save', type: 'preference', content: 'Mara prefers green tea.' })).toBe(
      'Updated [[anima:1]] instead of adding a copy: an active memory already said nearly the same. It now reads: "Mara prefers green tea."',
    );
    expect(await rows()).toEqual([1, 2]);
  });

  it('updates and forgets by id, in any form the model copies it', async () => {
    await tool.run({ action: 'save', type: 'world', content: 'Mara works at Fudan.' });
    expect(await tool.run({ action: 'update', id: '[[anima:1]]', content: 'Mara works at Fudan University.' })).toBe('Updated [[anima:1]].');
    expect(await tool.run({ action: 'forget', id: '1' })).toBe(
      'Forgot [[anima:1]]. It is kept out of recall; the person can bring it back from the Memories view.',
    );
    expect(await tool.run({ action: 'forget', id: 1 })).toBe(
      'Error: Memory 1 is forgotten (expired); only active memories can be forgotten. Undo the forget to bring it back. Nothing was changed.',
    );
    expect(await tool.run({ action: 'update', id: 42, content: 'x' })).toBe('Error: There is no memory 42. Nothing was changed.');
  });

  it('says which memory a new value replaced, on save and on update', async () => {
    await tool.run({ action: 'save', type: 'world', content: 'The person lives in Brno.' });
    expect(await tool.run({ action: 'save', type: 'world', content: 'The person lives in Prague.' })).toBe(
      'Saved as [[anima:2]]. It replaces [[anima:1]] ("The person lives in Brno.") with "The person lives in Prague.": the same fact with a new value. ' +
        'The old memory is kept as history, linked to the new one; tell the person what you replaced — they can undo it in the Memories view.',
    );
    expect((await store.get(1)).memory).toMatchObject({ status: 'superseded', supersededBy: 2 });
    expect(await tool.run({ action: 'update', id: 2, content: 'The person lives in Vienna.' })).toMatch(
      /^Saved the new value as \[\[anima:3\]\]\. It replaces \[\[anima:2\]\] \("The person lives in Prague\."\) with "The person lives in Vienna\."/,
    );
  });

  it('lists ids and one-line summaries, never whole bodies', async () => {
    const long = `Mara's travel plan:\n${'a long itinerary through the mountains, '.repeat(10)}ending in Kunming.`;
    await tool.run({ action: 'save', type: 'world', content: long });
    await tool.run({ action: 'save', type: 'preference', content: 'I prefer short answers' });
    await store.pin(2, true, 'person');
    const out = await tool.run({ action: 'list' });
    const lines = out.split('\n');
    expect(lines[0]).toBe('2 of 2 active memories (pinned first, then the most recently changed):');
    expect(lines[1]).toBe('#2 · preference · pinned · I prefer short answers');
    expect(lines[2]).toBe("#1 · world · Mara's travel plan: a long itinerary through the mountains, a long itinerary th…");
    expect(lines[2]!.split(' · ').at(-1)!.length).toBe(LIST_SUMMARY_CHARS);
    expect(out).not.toContain('Kunming');
    expect(await tool.run({ action: 'list', types: ['procedural'] })).toBe('No active memories yet.');
  });

  it('answers bad calls in plain words and writes nothing', async () => {
    expect(await tool.run({ action: 'save', content: 'Mara lives in Shanghai.' })).toBe(
      'Error: type is required to save: one of world, experience, opinion, observation, preference, procedural. Nothing was changed.',
    );
    expect(await tool.run({ action: 'save', type: 'world', content: 'x'.repeat(1024 * 1024) })).toBe(
      'Error: The content is 1048576 characters; a memory holds at most 4000. Keep the one thing worth remembering, in a sentence or two. Nothing was changed.',
    );
    expect(await tool.run({ action: 'save', type: 'world' })).toBe('Error: content is required to save: the fact, in a sentence or two. Nothing was changed.');
    expect(await tool.run({ action: 'delete', id: 1 })).toBe('Error: unknown action "delete": use one of save, update, forget, list. Nothing was changed.');
    expect(await tool.run({})).toBe('Error: unknown action null: use one of save, update, forget, list. Nothing was changed.');
    expect(await tool.run({ action: 'update', content: 'x' })).toBe(
      'Error: id is required: the number of the memory, as in [[anima:ID]]. Nothing was changed.',
    );
    expect(await tool.run({ action: 'save', type: 'opinion', content: 'Jazz is better than pop' })).toContain('must say whose it is');
    expect(await tool.run({ action: 'list', limit: 500 })).toBe('Error: limit must be a whole number from 1 to 50. Nothing was changed.');
    expect(await rows()).toEqual([0, 0]);
  });

  it.each(SECRETS)('refuses a secret and says to record where it lives: %s', async (secret) => {
    const out = await tool.run({ action: 'save', type: 'world', content: `The deploy credential is ${secret}` });
    expect(out.startsWith(`Error: ${SECRET_REFUSAL}`)).toBe(true);
    expect(out).not.toContain(secret);
    expect(await rows()).toEqual([0, 0]);
  });

  it('refuses a secret in an update too', async () => {
    await tool.run({ action: 'save', type: 'world', content: 'The deploy key is in the team vault.' });
    const out = await tool.run({ action: 'update', id: 1, content: `The deploy key is ${SECRETS[5]}` });
    expect(out).toContain(SECRET_REFUSAL);
    expect((await store.get(1)).memory.content).toBe('The deploy key is in the team vault.');
  });
});
