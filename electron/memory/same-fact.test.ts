// The same-fact rule on its own, and through the memory store on a real PGlite.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../db/open.js';
import { dbTemplate, tempDataDir } from '../testing/host.js';
import { compareFacts, differInFact } from './same-fact.js';
import { MemoryStore } from './store.js';

describe('compareFacts', () => {
  it.each([
    ['case and punctuation', 'Priya is allergic to shellfish.', 'priya is allergic to shellfish!'],
    ['digits for number words', 'Omar has two brothers.', 'Omar has 2 brothers.'],
    ['tens and ones', 'Omar is thirty-four.', 'Omar is 34'],
    ['contractions', "Lena isn't coming to the wedding.", 'Lena is not coming to the wedding.'],
    ['word order', 'In 2020 Ravi started a bakery.', 'Ravi started a bakery in 2020.'],
    ['list order', 'Mei speaks Spanish and French.', 'Mei speaks French and Spanish.'],
    ['spelling variants', 'The person’s favourite colour is grey.', "The person's favorite color is gray."],
    ['perfect and past', 'Ivo has joined a climbing club.', 'Ivo joined a climbing club.'],
    ['named / called', 'The person has a parrot named Kiwi.', 'The person has a parrot called Kiwi.'],
    ['fillers', 'The person likes green tea.', 'The person really likes green tea a lot.'],
    ['Chinese punctuation', '用户的哥哥在深圳工作。', '用户的哥哥在深圳工作'],
    ['Chinese numerals', '用户养了两只猫。', '用户养了2只猫'],
  ])('same fact: %s', (_why, a, b) => {
    expect(compareFacts(a, b)).toBe('same');
  });

  it.each([
    ['another name', 'My cousin Lara lives in Oslo.', 'My cousin Clara lives in Oslo.'],
    ['negation', 'Priya is allergic to shellfish.', 'Priya is not allergic to shellfish.'],
    ['number', 'Omar has two brothers.', 'Omar has three brothers.'],
    ['year', 'Ravi started a bakery in 2020.', 'Ravi started a bakery in 2018.'],
    ['time', 'The dentist appointment is on Monday at 8 am.', 'The dentist appointment is on Monday at 10 am.'],
    ['day', 'Mei swims every Monday.', 'Mei swims every Wednesday.'],
    ['tense', 'Ivo lives in Porto.', 'Ivo lived in Porto.'],
    ['owner', "Lena's cat is called Miso.", "Omar's cat is called Miso."],
    ['antonym', 'The person likes jazz.', 'The person dislikes jazz.'],
    ['attribute', 'Ravi drives a green van.', 'Ravi drives a white van.'],
    ['state change', 'Mei is writing a novel.', 'Mei finished writing a novel.'],
    ['names swapped', 'Lara called Omar.', 'Omar called Lara.'],
    ['another city (zh)', '用户的哥哥在深圳工作。', '用户的哥哥在广州工作。'],
    ['negation (zh)', '用户喜欢吃辣。', '用户不喜欢吃辣。'],
    ['number (zh)', '用户养了两只猫。', '用户养了三只猫。'],
  ])('different facts: %s', (_why, a, b) => {
    expect(compareFacts(a, b)).toBe('distinct');
  });

  it('keeps every must-not-merge pair of the development set apart and joins all but at most one restatement', () => {
    const file = path.resolve(import.meta.dirname, '..', '..', '..', 'shared', 'bench', 'memory', 'pairs-dev.json');
    const pairs = JSON.parse(fs.readFileSync(file, 'utf8')) as { a: string; b: string; same: boolean }[];
    expect(pairs.length).toBeGreaterThan(20);
    const wrong = pairs.filter((p) => !p.same && compareFacts(p.a, p.b) === 'same');
    const missed = pairs.filter((p) => p.same && compareFacts(p.a, p.b) !== 'same');
    expect(wrong).toEqual([]);
    expect(missed.length).toBeLessThanOrEqual(1);
  });
});

describe('differInFact (the guard on matches by meaning)', () => {
  it('separates numbers in words or digits, one-sided negations, antonyms and other names', () => {
    expect(differInFact('Omar has two brothers.', 'Omar has 3 brothers.')).toBe(true);
    expect(differInFact('Omar has two brothers.', 'Omar has 2 brothers.')).toBe(false);
    expect(differInFact('Priya eats fish.', "Priya doesn't eat fish.")).toBe(true);
    expect(differInFact('用户喜欢咖啡', '用户不喜欢咖啡')).toBe(true);
    expect(differInFact('The person likes jazz.', 'The person dislikes jazz.')).toBe(true);
    expect(differInFact('Lara works at the library.', 'Clara works at the library.')).toBe(true);
    expect(differInFact('The person enjoys hiking in the hills.', 'The person loves hill walks.')).toBe(false);
  });
});

describe('through the memory store', () => {
  let db: Database;
  let store: MemoryStore;
  beforeAll(async () => {
    db = await openDatabase(tempDataDir('anima-same-fact-'), { template: dbTemplate() });
    store = new MemoryStore(db);
  });
  afterAll(async () => {
    await db.close();
  });
  const save = (content: string) => store.create({ type: 'world', content, source: 'user', actor: 'person' });

  it('keeps Anna and Hanna, and a fact and its negation, as two memories each', async () => {
    const anna = await save('My sister Anna lives in Berlin.');
    const hanna = await save('My sister Hanna lives in Berlin.');
    expect(hanna.outcome).toBe('created');
    expect(hanna.memory.id).not.toBe(anna.memory.id);
    expect((await store.get(anna.memory.id)).memory.content).toBe('My sister Anna lives in Berlin.');
    await save('Tom is allergic to peanuts.');
    expect((await save('Tom is not allergic to peanuts.')).outcome).toBe('created');
  });

  it('updates the memory a restatement repeats, even when its letters differ a lot', async () => {
    const first = await save('Jon does not eat meat.');
    const again = await save("Jon doesn't eat meat.");
    expect(again).toMatchObject({ outcome: 'updated', memory: { id: first.memory.id, content: "Jon doesn't eat meat." } });
    const kids = await save('Maria has three children.');
    expect(await save('Maria has 3 children.')).toMatchObject({ outcome: 'updated', memory: { id: kids.memory.id } });
  });
});
