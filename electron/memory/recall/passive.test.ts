import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MemoryType } from '../../../shared/api.js';
import { openDatabase, type Database } from '../../db/open.js';
import { dbTemplate, tempDataDir } from '../../testing/host.js';
import { MemoryStore } from '../store.js';
import { Recall } from './index.js';
import { ONE_LINE_CHARS, PASSIVE_RELEVANCE, formatPassive } from './passive.js';
import { chooseRelevant, readMessage } from './relevance.js';

const long = `Mara's garden plan:\n${'tomatoes, beans and squash along the south fence; '.repeat(6).trim()}`;
const flatLong = long.replace(/\s+/g, ' ');
const oneLine = `${flatLong.slice(0, ONE_LINE_CHARS - 1).trimEnd()}…`;
const M = [
  { id: 1, type: 'world' as MemoryType, content: 'Mara lives in Lisbon.' },
  { id: 2, type: 'preference' as MemoryType, content: long },
  { id: 3, type: 'experience' as MemoryType, content: `I helped Mara plan the garden.\n\nIt took an afternoon.` },
];
const full = [
  '- (world) Mara lives in Lisbon. [[anima:1]]',
  `- (preference) ${long} [[anima:2]]`,
  '- (experience) I helped Mara plan the garden.\n\nIt took an afternoon. [[anima:3]]',
];
const shrunk = [full[0]!, `- (preference) ${oneLine} [[anima:2]]`, '- (experience) I helped Mara plan the garden. It took an afternoon. [[anima:3]]'];

describe('formatPassive', () => {
  it('keeps every entry whole when the block fits', () => {
    const text = full.join('\n');
    expect(formatPassive(M, text.length)).toEqual({ kept: M, text });
  });

  it('past the budget shrinks entries to one line, lowest-ranked first', () => {
    // one char short of everything whole: only the last entry becomes one line
    const lastShrunk = [full[0]!, full[1]!, shrunk[2]!].join('\n');
    expect(formatPassive(M, full.join('\n').length - 1)).toEqual({ kept: M, text: lastShrunk });
    // then the one above it
    const both = shrunk.join('\n');
    expect(formatPassive(M, lastShrunk.length - 1)).toEqual({ kept: M, text: both });
    expect(both.length).toBeLessThan(lastShrunk.length);
  });

  it('then drops entries, lowest-ranked first', () => {
    const all = shrunk.join('\n');
    expect(formatPassive(M, all.length - 1)).toEqual({ kept: M.slice(0, 2), text: shrunk.slice(0, 2).join('\n') });
    expect(formatPassive(M, shrunk[0]!.length)).toEqual({ kept: M.slice(0, 1), text: shrunk[0] });
    expect(formatPassive(M, shrunk[0]!.length - 1)).toEqual({ kept: [], text: '' });
    expect(formatPassive([], 2000)).toEqual({ kept: [], text: '' });
  });
});

describe('passiveRecall', () => {
  let db: Database;
  let recall: Recall;
  let dir: string;
  const ids: Record<string, number> = {};
  beforeAll(async () => {
    dir = tempDataDir('anima-passive-');
    db = await openDatabase(dir, { template: dbTemplate() });
    recall = new Recall({ db });
    const store = new MemoryStore(db);
    const save = async (name: string, type: MemoryType, content: string) => {
      ids[name] = (await store.create({ type, content, source: 'user', actor: 'person' })).memory.id;
    };
    await save('lisbon', 'world', 'Sam’s sister Mara lives in Lisbon and works as a nurse in Lisbon.');
    await save('tea', 'preference', 'Mara prefers green tea.');
    await save('nurse', 'world', 'Night shifts are hard for a nurse.');
    await save('old', 'world', 'Mara lived in Porto.');
    await store.forget(ids.old!, 'person');
  });
  afterAll(async () => {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  // The score mechanics below, without the relevance rule (its own test is after them).
  const base = { limit: 5, minScore: 0, minRelativeScore: 0, maxChars: 2000, minCoverage: 0 };

  it('injects active semantic memories the message calls up, best first', async () => {
    const r = await recall.passive({ ...base, query: 'Does Mara still live in Lisbon, or Porto?' });
    expect(r.memories.map((m) => m.id)).toEqual([ids.lisbon, ids.tea]);
    expect(r.memories[0]).toEqual({ id: ids.lisbon, type: 'world', content: 'Sam’s sister Mara lives in Lisbon and works as a nurse in Lisbon.', score: 1 });
    expect(r.text).toBe(
      `- (world) Sam’s sister Mara lives in Lisbon and works as a nurse in Lisbon. [[anima:${ids.lisbon}]]\n- (preference) Mara prefers green tea. [[anima:${ids.tea}]]`,
    );
  });

  it('drops hits below min_score and below min_relative_score of the best', async () => {
    const all = await recall.passive({ ...base, query: 'Mara Lisbon nurse' });
    // "nurse" and "mara" weigh the same here, and the two one-word matches are as long: the newer first
    expect(all.memories.map((m) => m.id)).toEqual([ids.lisbon, ids.nurse, ids.tea]);
    const [, second, third] = all.memories;
    const rel = await recall.passive({ ...base, query: 'Mara Lisbon nurse', minRelativeScore: (second!.score + third!.score) / 2 });
    expect(rel.memories.map((m) => m.id)).toEqual([ids.lisbon, ids.nurse]);
    const abs = await recall.passive({ ...base, query: 'Mara Lisbon nurse', minScore: 0.99 });
    expect(abs.memories.map((m) => m.id)).toEqual([ids.lisbon]);
    expect((await recall.passive({ ...base, query: 'Mara Lisbon nurse', limit: 1 })).memories.map((m) => m.id)).toEqual([ids.lisbon]);
  });

  it('leaves out excluded memories (those the resident block carries) without shortening the list', async () => {
    const r = await recall.passive({ ...base, limit: 2, query: 'Mara Lisbon nurse', excludeIds: [ids.lisbon!] });
    expect(r.memories.map((m) => m.id)).toEqual([ids.nurse, ids.tea]);
    expect(r.memories[0]!.score).toBe(1);
  });

  it('keeps the block within max_chars', async () => {
    const r = await recall.passive({ ...base, query: 'Mara Lisbon nurse', maxChars: 120 });
    expect(r.text.length).toBeLessThanOrEqual(120);
    expect(r.memories.map((m) => m.id)).toEqual([ids.lisbon]);
  });

  it('brings only memories that answer enough of the message, and nothing for small talk or unrelated tasks', async () => {
    const relevant = { limit: 5, minScore: 0, minRelativeScore: 0, maxChars: 2000 };
    // The tea memory shares only the name with this question: it stays out.
    expect((await recall.passive({ ...relevant, query: 'Does Mara still live in Lisbon, or Porto?' })).memories.map((m) => m.id)).toEqual([ids.lisbon]);
    expect((await recall.passive({ ...relevant, query: 'What tea does Mara like?' })).memories.map((m) => m.id)).toEqual([ids.tea]);
    for (const query of [
      'How are you today?',
      'Thanks, that helped a lot!',
      'Write a haiku about the sea.',
      "What's 17 times 23?",
      'How do I reverse a list in Python?',
      '你好，今天怎么样？',
    ]) {
      expect(await recall.passive({ ...relevant, query })).toEqual({ memories: [], text: '' });
    }
  });

  it('returns nothing for nothing', async () => {
    for (const query of ['', '???', 'AND', 'the of', 'weather tomorrow']) {
      expect(await recall.passive({ ...base, query })).toEqual({ memories: [], text: '' });
    }
    expect(await recall.passive({ ...base, query: 'Mara', limit: 0 })).toEqual({ memories: [], text: '' });
  });

  it('returns empty, quickly, when the search takes longer than timeoutMs', async () => {
    // A database that answers after a second.
    const slow = { query: () => new Promise((resolve) => setTimeout(() => resolve({ rows: [] }), 1000)) } as unknown as Database;
    const start = performance.now();
    expect(await new Recall({ db: slow }).passive({ ...base, query: 'Mara', timeoutMs: 30 })).toEqual({ memories: [], text: '' });
    expect(performance.now() - start).toBeLessThan(1_000); // before the database answered: the 30 ms bound ended it
  });
});

describe('passive recall: the relevance rule', () => {
  let db: Database;
  let recall: Recall;
  let dir: string;
  const ids: Record<string, number> = {};
  beforeAll(async () => {
    dir = tempDataDir('anima-relevance-');
    db = await openDatabase(dir, { template: dbTemplate() });
    recall = new Recall({ db });
    const store = new MemoryStore(db);
    const save = async (name: string, type: MemoryType, content: string) => {
      ids[name] = (await store.create({ type, content, source: 'user', actor: 'person' })).memory.id;
    };
    await save('sister', 'world', 'The person’s sister Mara lives in Lisbon and works night shifts as a nurse.');
    await save('trip', 'experience', 'The person’s trip to Kyoto in April was cancelled because of a storm.');
    await save('cheers', 'world', 'Mara cheers for Benfica every weekend.');
    await save('going', 'world', 'Sam is going to the dentist today, which is new for him.');
    await save('pride', 'experience', 'Sam marched at Pride in June with his friends.');
    await save('tea', 'preference', 'Mara prefers green tea.');
    await save('zhSister', 'world', '这个人的妹妹住在上海，是一名护士。');
    await save('zhTea', 'preference', '小明喜欢喝绿茶，不喜欢咖啡。');
    await save('zhCat', 'world', '这个人养了一只叫团子的猫。');
  });
  afterAll(async () => {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  // The default settings (settings.ts DEFAULT_MEMORY_SETTINGS), as a turn runs them.
  const defaults = { limit: 5, minScore: 0, minRelativeScore: 0.5, maxChars: 2000 };
  const injected = async (query: string) => (await recall.passive({ ...defaults, query })).memories.map((m) => m.id);

  it('small talk injects nothing, even when a memory holds its one word', async () => {
    for (const query of [
      'cheers!',
      "how's it going?",
      "what's new with you today?",
      'Thanks, good night!',
      'hey there',
      'ok, sounds good',
      // "weekend" is a word of the Benfica memory; here it is a farewell.
      'have a great weekend!',
      'nothing much, just chilling',
      'evening, how was your day?',
    ]) {
      expect(await recall.passive({ ...defaults, query })).toEqual({ memories: [], text: '' });
    }
    // The coverage rule alone (before this one) let the lone shared word through.
    expect((await recall.passive({ ...defaults, query: 'cheers!', minCoverage: 0.55 })).memories.map((m) => m.id)).toEqual([ids.cheers]);
  });

  it('a general task or question that shares one word or a proper noun with a memory brings nothing', async () => {
    for (const query of ['Write a poem about tea.', 'Who wrote Pride and Prejudice?', 'How do I make a storm drain?', 'Is Lisbon the capital of Portugal?']) {
      expect(await injected(query)).toEqual([]);
    }
  });

  it('a question about the person’s own life brings the memory that answers it, with or without a name', async () => {
    expect(await injected('Where does my sister live these days?')).toEqual([ids.sister]);
    expect(await injected('What did I tell you about my trip?')).toEqual([ids.trip]);
    expect(await injected('How is my sister Mara doing in Lisbon?')).toEqual([ids.sister]);
    expect(await injected('What tea does Mara like?')).toEqual([ids.tea]);
    expect(await injected('Why was the Kyoto trip cancelled?')).toEqual([ids.trip]);
    // Asking words ("tell me about", "do you remember") are not what the message is about.
    expect(await injected('Do you remember my trip?')).toEqual([ids.trip]);
    const aboutMara = await injected('Tell me about Mara.');
    expect(aboutMara.length).toBeGreaterThan(0);
    expect(aboutMara.every((id) => [ids.sister, ids.cheers, ids.tea].includes(id))).toBe(true);
  });

  it('in Chinese too: small talk and tasks bring nothing, a question about the person brings the memory', async () => {
    for (const query of ['你好，今天怎么样？', '谢谢你的帮助！', '晚安，明天聊', '帮我写一首关于月亮的诗', '咖啡是哪个国家发明的？']) {
      expect(await injected(query)).toEqual([]);
    }
    expect(await injected('我妹妹住在哪里？')).toEqual([ids.zhSister]);
    expect(await injected('我的猫团子多大了？')).toEqual([ids.zhCat]);
    expect(await injected('小明喜欢喝什么茶？')).toEqual([ids.zhTea]);
    expect(await injected('你还记得我妹妹在哪里工作吗？')).toEqual([ids.zhSister]);
  });
});

describe('chooseRelevant: which admitted memories keep', () => {
  const opts = { minScore: 0, minRelativeScore: 0.5, limit: 5 };
  const message = readMessage('What did Nate win at the tournament?');
  const won = { text: 'Nate won a video game tournament last week.', score: 1, coverage: 0.6, shared: 3 };
  const movies = { text: 'Nate enjoys sci-fi movies after a tournament day.', score: 0.95, coverage: 0.4, shared: 2 };
  const streams = { text: 'Nate streams his tournament games.', score: 0.5, coverage: 0.3, shared: 2 };

  it('a second memory that ranks close to the first comes along, though it answers less of the message', () => {
    // Order keys: 1 + 0.6 + 0.4 = 2.0, 0.95 + 0.4 + 0.4 = 1.75 (≥ 0.85 × 2.0), 0.5 + 0.3 + 0.4 = 1.2.
    // Coverage alone (0.4 < 0.7 × 0.6) would leave the second out.
    expect(chooseRelevant([won, movies, streams], message, PASSIVE_RELEVANCE, opts)).toEqual([won, movies]);
    expect(chooseRelevant([won, movies, streams], message, { ...PASSIVE_RELEVANCE, closeKey: Infinity }, opts)).toEqual([won]);
  });

  it('one that ranks far below the first stays out unless it answers nearly as much', () => {
    const far = { ...streams, coverage: 0.45 };
    expect(chooseRelevant([won, streams], message, PASSIVE_RELEVANCE, opts)).toEqual([won]);
    expect(chooseRelevant([won, far], message, PASSIVE_RELEVANCE, opts)).toEqual([won, far]);
  });

  it('small talk keeps nothing, however well a memory scores', () => {
    expect(chooseRelevant([won, movies], readMessage('have a great weekend!'), PASSIVE_RELEVANCE, opts)).toEqual([]);
  });
});

describe('passive recall: the default settings on memories of two people', () => {
  let db: Database;
  let recall: Recall;
  let dir: string;
  const ids: Record<string, number> = {};
  beforeAll(async () => {
    dir = tempDataDir('anima-passive-people-');
    db = await openDatabase(dir, { template: dbTemplate() });
    recall = new Recall({ db });
    const store = new MemoryStore(db);
    const save = async (name: string, type: MemoryType, content: string) => {
      ids[name] = (await store.create({ type, content, source: 'light-sleep', actor: 'light-sleep' })).memory.id;
    };
    await save('natePrize', 'experience', 'Nate won a video game tournament and spent the prize on a tank for his turtles.');
    await save('joannaPrize', 'experience', 'Joanna asked Nate about the tournament prize.');
    await save('joannaScript', 'experience', 'Joanna finished her first screenplay and sent it to a film festival.');
    await save('nateTurtles', 'world', 'Nate has three turtles and feeds them vegetables and insects.');
    await save('sea', 'experience', 'Joanna swims in the sea every morning in summer.');
    await save('hours', 'world', 'Nate streams his games 23 hours a week.');
    await save('nateGames', 'world', "Nate's main hobbies are playing video games and watching movies.");
    await save('nateSciFi', 'preference', 'Nate enjoys action and sci-fi movies for their cool effects.');
    await save('joannaHobbies', 'world', 'Joanna enjoys reading, watching movies, and exploring nature as hobbies.');
    await save('zhWeather', 'preference', '这个人不喜欢下雨的天气，下雨天总在家看书。');
    await save('zhTea', 'preference', '小明喜欢喝绿茶，不喜欢咖啡。');
  });
  afterAll(async () => {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  // DEFAULT_MEMORY_SETTINGS (electron/settings/settings.ts), as a turn runs them.
  const defaults = { limit: 5, minScore: 0, minRelativeScore: 0.5, maxChars: 2000 };
  const injected = async (query: string, limit = defaults.limit) => (await recall.passive({ ...defaults, limit, query })).memories.map((m) => m.id);

  it('a question about someone brings the memory about them first, before one that only mentions them', async () => {
    const question = 'What did Nate do with the tournament prize?';
    // By words alone the shorter memory that mentions Nate ranks first…
    const byWords = await recall.passive({ ...defaults, query: question, minRelativeScore: 0, minCoverage: 0 });
    expect(byWords.memories.map((m) => m.id).slice(0, 2)).toEqual([ids.joannaPrize, ids.natePrize]);
    // …the rule puts the memory about Nate before it.
    expect((await injected(question)).slice(0, 2)).toEqual([ids.natePrize, ids.joannaPrize]);
    expect(await injected(question, 1)).toEqual([ids.natePrize]);
    expect(await injected('What does Nate feed his turtles?')).toEqual([ids.nateTurtles]);
    expect(await injected('Where did Joanna send her screenplay?')).toEqual([ids.joannaScript]);
    expect(await injected('小明喜欢喝什么？')).toEqual([ids.zhTea]);
  });

  it('a second memory about the same someone that answers the question comes along; one about someone else does not', async () => {
    expect(await injected('What kind of movies does Nate like?')).toEqual([ids.nateGames, ids.nateSciFi]);
  });

  it('small talk and unrelated tasks bring nothing in either language, even when they share a word with a memory', async () => {
    for (const query of [
      'how are you today?',
      'write a haiku about the sea',
      "what's 17 times 23?",
      'Thanks, see you tomorrow!',
      '你好',
      '今天天气怎么样',
      '谢谢，晚安！',
      '帮我写一首关于下雨的诗',
    ]) {
      expect(await recall.passive({ ...defaults, query })).toEqual({ memories: [], text: '' });
    }
  });
});
