// Entity graph at scale: how long the Graph view's ego query and the write path's mention detection
// take on a lived-in graph.
//   npm run bench:graph -- [--entities 20000] [--edges N] [--queries 200] [--data DIR] [--json FILE]
//
// - Build: a synthetic graph of --entities entities and --edges edges (default max(100,000, 5 ×
//   entities)) is loaded into a fresh data folder through EntityStore.importGraph, the method behind
//   the `graph.import` API, each call checked against that API's input schema first. Its shape is a
//   person's: the person and the companion, a handful of hubs (partner, best friend, mother,
//   hometown, the city they live in, employer, a hobby) with thousands of co-mention edges each,
//   then preferential attachment for everyone else (a power-law degree distribution); kinds
//   person/place/org/thing/topic; co_mention edges with whole-number weights (mostly 1, a long
//   tail), and ~6% typed relations (lives_in, works_at, friend_of…), some with validFrom/validTo.
//   Names are unique and look real (first + last names, 王小明-style names, places, companies…
//   made from syllables), from a seeded PRNG: every run builds the same graph.
// - Ego: EntityStore.ego(id, { at: now, hops: 2, limit: 300 }) — what `graph.view` runs for a
//   centre — on every hub and random other entities, after a few warm-up queries; p50/p95 of each
//   query's own time.
// - Mentions: detectMentionsAsync, the detection recordMentions runs on every stored message (the
//   graph indexer's queue), on each LoCoMo dev turn as the app stores it (words + photo caption) and
//   on the Chinese sentences below, each timed on its own after a warm-up.
// - --mentions FILE (bench/data/mentions.json): the mention corpus — sentences with the entities a
//   reader expects. mention_precision and mention_recall compare detected names (name keys) with
//   them; a low-confidence name (a lone unknown word at a sentence start) counts when another
//   sentence names it with confidence, as the recorder would link it to the entity made then.
//   record_ms_small / record_ms_large: EntityStore.recordMentionsBatch per stored message, with the
//   inputs the graph indexer passes for a message it read (text, time, role): the person's own name
//   if they give it, detection, resolution, rows, counts, co-mention edges. The indexer's read of the
//   message row is not in it (one primary-key lookup, whatever the graph's size). On a graph of the first
//   1,000 entities and on the whole built graph, the same 300 messages on each: half of them name
//   entities both graphs hold, half are corpus sentences and LoCoMo turns (new names too).
// `entities` and `edges` in the result are what the database holds after the build (active
// entities, the companion and the person included; every entity_edges row). Times in ms. Exits 0
// when it measured, 2 on bad arguments.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { parseInput } from '../shared/api.js';
import { openDatabase } from '../electron/db/open.js';
import { turnContent } from '../electron/conversations/import-locomo.js';
import { detectMentions, detectMentionsAsync, warmMentionDetection } from '../electron/graph/mentions.js';
import { nameKey } from '../electron/graph/names.js';
import { EntityStore, SELF_ENTITY_ID, USER_ENTITY_ID, type EntityKind } from '../electron/graph/store.js';
import { Conversations } from '../electron/conversations/conversations.js';
import { MemoryStore } from '../electron/memory/store.js';
import { locomoFiles, median, percentile, round } from './util.js';

const USAGE = 'usage: npm run bench:graph -- [--entities 20000] [--edges N] [--queries 200] [--data DIR] [--mentions FILE] [--json FILE]';

function badArgs(message: string): never {
  console.error(message);
  console.error(USAGE);
  process.exit(2);
}

const { values } = (() => {
  try {
    return parseArgs({
      options: {
        entities: { type: 'string', default: '20000' },
        edges: { type: 'string' },
        queries: { type: 'string', default: '200' },
        data: { type: 'string', default: path.join('..', 'shared', 'bench', 'locomo', 'dev') },
        json: { type: 'string' },
        mentions: { type: 'string' },
      },
    });
  } catch (err) {
    return badArgs((err as Error).message);
  }
})();

function wholeNumber(name: string, raw: string, min: number, why = ''): number {
  const n = /^\d+$/.test(raw.trim()) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < min) badArgs(`--${name}: expected a whole number of at least ${min}${why}, not "${raw}"`);
  return n;
}

/** The person, the companion and the hubs: every ego sample includes them. */
const HUBS: { name: string; kind: EntityKind; role: string; share: number }[] = [
  // share: the fraction of everyone else the hub is mentioned with (older, better-known entities more often).
  { name: 'You', kind: 'user', role: 'the person', share: 0.3 },
  { name: 'Anima', kind: 'self', role: 'the companion', share: 0.03 },
  { name: 'Jordan Reyes', kind: 'person', role: 'partner', share: 0.15 },
  { name: 'Priya Natarajan', kind: 'person', role: 'best friend', share: 0.1 },
  { name: 'Helen Carter', kind: 'person', role: 'mother', share: 0.06 },
  { name: 'Portland', kind: 'place', role: 'hometown', share: 0.08 },
  { name: 'Lisbon', kind: 'place', role: 'city', share: 0.12 },
  { name: 'Northwind Labs', kind: 'org', role: 'employer', share: 0.1 },
  { name: 'Trail Running', kind: 'topic', role: 'hobby', share: 0.05 },
];
const H = HUBS.length;
const hub = (role: string) => HUBS.findIndex((h) => h.role === role);

const N = wholeNumber('entities', String(values.entities), 100);
const E = values.edges === undefined ? Math.max(100_000, 5 * N) : wholeNumber('edges', values.edges, 1);
const QUERIES = wholeNumber('queries', String(values.queries), H, ' (every hub is queried)');
// Random pairs fill the last edges: past a quarter of all pairs that would crawl.
const MAX_EDGES = Math.floor((N * (N - 1)) / 4);
if (E > MAX_EDGES) badArgs(`--edges: ${E} edges do not fit ${N} entities (at most ${MAX_EDGES}); pass fewer edges or more entities`);
if (QUERIES > N) badArgs(`--queries: at most one query per entity (${N})`);
/** The graph.import API's own limits per call (shared/api.ts). */
const IMPORT_MAX_ENTITIES = 20_000;
const IMPORT_MAX_EDGES = 200_000;
const TYPED_SHARE = 0.06;

// ---- the texts, read first: a missing folder is a bad argument, not a failure after the build ----

const dataDir = path.resolve(String(values.data));
const englishTexts: string[] = [];
for (const file of locomoFiles(dataDir)) {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(path.join(dataDir, file), 'utf8'));
  } catch (err) {
    console.warn(`skipped ${file}: not JSON (${(err as Error).message})`);
    continue;
  }
  // Like importLocomo: some distributions wrap the conversation as { conversation: {...}, qa: [...] }.
  const outer = (raw ?? {}) as Record<string, unknown>;
  const data = (outer.conversation && typeof outer.conversation === 'object' ? outer.conversation : outer) as Record<string, unknown>;
  for (const [key, value] of Object.entries(data)) {
    if (!/^session_\d+$/.test(key) || !Array.isArray(value)) continue;
    for (const turn of value) {
      if (!turn || typeof turn !== 'object') continue;
      // What Conversations.append stores, and so what the indexer hands to recordMentions.
      const content = turnContent(turn as Record<string, unknown>);
      if (content.trim()) englishTexts.push(content);
    }
  }
}
if (englishTexts.length === 0) badArgs(`--data: no LoCoMo turns in ${dataDir}`);

interface CorpusSentence {
  lang: string;
  text: string;
  entities: { name: string; kind: string }[];
}
let corpus: CorpusSentence[] | null = null;
if (values.mentions !== undefined) {
  try {
    const doc = JSON.parse(fs.readFileSync(path.resolve(String(values.mentions)), 'utf8')) as { sentences?: CorpusSentence[] };
    if (!Array.isArray(doc.sentences) || !doc.sentences.every((x) => typeof x?.text === 'string' && Array.isArray(x.entities)))
      throw new Error('expected { sentences: [{ text, entities: [{ name, kind }] }] }');
    corpus = doc.sentences;
  } catch (err) {
    badArgs(`--mentions: ${(err as Error).message}`);
  }
}

/** Everyday Chinese with people, places and organisations, as a person would write to the companion. */
const CHINESE_TEXTS = [
  '我和王小明上周去了杭州西湖。',
  '李娜说她下个月要搬到上海工作。',
  '周末我陪妈妈去苏州看了外婆。',
  '张伟昨天从北京飞回成都了。',
  '我的室友陈静在腾讯上班，每天加班到很晚。',
  '刘洋和他女朋友打算国庆节去厦门旅游。',
  '今天在星巴克碰到了高中同学赵磊。',
  '我们公司下周派我去深圳出差三天。',
  '小红告诉我她考上了南京大学的研究生。',
  '黄老师建议我多读一些鲁迅的作品。',
  '春节的时候我们全家回了老家湖南长沙。',
  '杨帆在华为做了五年工程师，最近想辞职。',
  '我跟表姐约好明天一起去逛西单。',
  '吴敏的婚礼定在青岛的一家海边酒店。',
  '爸爸退休以后一直住在大连。',
  '孙浩说他在阿里巴巴实习的时候学到了很多。',
  '昨晚和林晓雨视频聊了两个小时，她现在在伦敦读书。',
  '我打算暑假去云南丽江住一个月。',
  '马丽推荐的那家火锅店就在重庆解放碑附近。',
  '下周三我要去医院看望生病的李奶奶。',
  '何军刚从美国回来，给我带了一本书。',
  '我们在西安吃了好多羊肉泡馍。',
  '朱婷周六在武汉有一场比赛，我想去看。',
  '徐磊介绍我认识了他的同事郑凯。',
  '去年冬天我和朋友去哈尔滨看了冰雕。',
  '老王每天早上都在公园里打太极。',
  '宋佳问我要不要一起去广州参加展会。',
  '我妹妹在天津读大学，学的是建筑。',
  '胡斌上个月在京东买了一台新电脑。',
  '韩梅梅终于拿到了去日本东京的签证。',
  '梁晨说杭州的夏天太热了，她想搬去昆明。',
  '谢谢你上次帮我联系了北京协和医院的医生。',
  '我和男朋友周杰下个月要去三亚度假。',
  '唐宁是我在复旦大学的同学，现在在银行工作。',
  '冯远给我发微信说他已经到了拉萨。',
  '明天早上八点我要和许晴在南京东路见面。',
  '阿强在苏州开了一家小面馆，生意很好。',
  '我最近在学弹吉他，老师是一个叫彭磊的年轻人。',
  '高原和他爸爸开车从郑州回了洛阳。',
  '曾经理让我把报告发给深圳分公司的罗琳。',
  '听说叶子在桂林租了一间带院子的房子。',
  '小李昨天在地铁上把手机丢了，急得不行。',
];

// ---- a seeded PRNG: the same graph every run ----

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = mulberry32(0x5eed);
const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;
/** Early entries far more often than late ones: popular places, big employers, common topics. */
const pickPopular = <T>(list: readonly T[]): T => list[Math.floor(list.length * rand() ** 2.5)]!;
/** A whole number ≥ 1 with a power-law tail: P(w ≥ k) ≈ (scale / k)^alpha. */
const heavyTail = (scale: number, alpha: number, cap: number) => Math.min(cap, Math.max(1, Math.floor(scale * (1 - rand()) ** (-1 / alpha))));

// ---- names ----

const words = (s: string) => s.trim().split(/\s+/);
const FIRST = words(`
  Aaron Abigail Adam Adrian Aisha Alan Alex Alice Amara Amelia Ana Andre Andrew Angela Anna Arjun Ava Ben
  Bianca Brian Caleb Camila Carlos Caroline Chloe Chris Clara Daniel David Diana Diego Dylan Elena Eli
  Elif Emily Emma Eric Ethan Eva Fatima Felix Fiona Gabriel Grace Hana Hannah Harry Hugo Ian Ines Isaac
  Isabel Ivan Jack Jade James Jasmine Jason Javier Jenna Jessica Joel John Jonas Julia Kai Karen Kenji
  Laura Layla Leo Liam Lily Lucas Lucia Luis Maya Marco Maria Mark Marta Mateo Matt Mei Melanie Mia
  Michael Mila Mohammed Nadia Naomi Nathan Nina Noah Nora Olivia Omar Oscar Paul Pedro Rachel Rafael
  Rosa Ryan Sam Sara Sofia Sophie Tariq Theo Thomas Tom Valentina Victor Yara Yusuf Zoe
`);
const LAST = words(`
  Adams Ahmed Alvarez Anderson Bailey Baker Becker Bennett Brooks Brown Campbell Carter Castillo Chen
  Clark Cohen Collins Cooper Costa Cruz Davies Diaz Dubois Edwards Evans Fernandes Fischer Flores Foster
  Garcia Gomez Gonzalez Gray Green Gupta Hall Hansen Harris Hayes Hernandez Hill Hughes Ito Jackson
  Jensen Johnson Jones Kaur Kelly Khan Kim King Kowalski Larsen Lee Lewis Lopez Martin Martinez Meyer
  Miller Mitchell Moore Morales Morgan Murphy Nakamura Nguyen Novak Okafor Oliveira Ortiz Park Patel
  Perez Peters Petrov Phillips Price Reed Richter Rivera Roberts Robinson Rodriguez Rossi Russo Santos
  Schmidt Scott Silva Singh Smith Sousa Stewart Suzuki Taylor Thompson Torres Turner Walker Wang Ward
  Watson White Williams Wilson Wong Wright Young Yilmaz Zhang
`);
const SURNAMES_ZH = [...'王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁'];
const GIVEN_ZH = [...'伟芳娜敏静丽强磊军洋勇艳杰娟涛明超秀霞平刚桂英华玉兰萍红鹏辉晨宇浩然子涵欣怡梓轩思雨佳琪雪婷博文晓彤'];
const ONSETS = words('b br c ch d dr f g gr h j k l m n p r s sh st t th tr v w z');
const VOWELS = words('a e i o u a e o ai ea ou io');
const CODAS = ['', '', 'n', 'r', 'l', 's', 'th', 'm', 'nd', 'rk', 'ck', 'x'];
const PLACE_SUFFIXES = words('ford brook ton field haven wick dale bury ridge port mouth stead vale');
const ORG_SUFFIXES = [
  'Labs',
  'Systems',
  'Bakery',
  'Clinic',
  'Studio',
  'Foods',
  'Partners',
  'Press',
  'Robotics',
  'Dental',
  'Fitness',
  'Café',
  'Bank',
  'Motors',
  'Records',
  'Academy',
  'High School',
  'University',
  'Hospital',
  'Insurance',
  'Architects',
  'Games',
];
const THINGS = [
  'Bike',
  'Guitar',
  'Camera',
  'Kayak',
  'Telescope',
  'Sofa',
  'Laptop',
  'Piano',
  'Van',
  'Watch',
  'Tent',
  'Drone',
  'Espresso Machine',
  'Headphones',
  'Sneakers',
  'Backpack',
  'Synthesizer',
  'Scooter',
  'Tablet',
  'Record Player',
];
const TOPIC_STYLES = words('Jazz Trail Urban Vintage Indie Classical Street Modern Japanese Italian Amateur Competitive Digital Folk Nordic Baroque');
const TOPIC_CRAFTS = words(
  'Running Photography Gardening Piano Baking Climbing Chess Yoga Pottery Cycling Painting Cooking Dancing Poetry Sailing Knitting Astronomy Film Architecture Calligraphy',
);
const TOPIC_SERIES = ['Podcast', 'Book Club', 'Festival', 'Series', 'League', 'Workshop', 'Meetup', 'Newsletter'];

const cap = (s: string) => s[0]!.toUpperCase() + s.slice(1);
function syllableWord(min = 2, max = 3): string {
  let w = '';
  const n = min + Math.floor(rand() * (max - min + 1));
  for (let i = 0; i < n; i++) w += pick(ONSETS) + pick(VOWELS) + (i === n - 1 ? pick(CODAS) : '');
  return cap(w);
}

const NAME_FOR: Record<Exclude<EntityKind, 'self' | 'user'>, () => string> = {
  person: () => {
    if (rand() < 0.1) return pick(SURNAMES_ZH) + pick(GIVEN_ZH) + (rand() < 0.6 ? pick(GIVEN_ZH) : '');
    return `${pick(FIRST)} ${pick(LAST)}`;
  },
  place: () => {
    const r = rand();
    if (r < 0.55) return syllableWord(1, 2) + pick(PLACE_SUFFIXES);
    if (r < 0.7) return `Lake ${syllableWord()}`;
    if (r < 0.8) return `Port ${syllableWord()}`;
    if (r < 0.9) return `${syllableWord()} Street`;
    return `${syllableWord()} Park`;
  },
  org: () => `${syllableWord()} ${pick(ORG_SUFFIXES)}`,
  thing: () => `${syllableWord()} ${pick(THINGS)}`,
  topic: () => (rand() < 0.5 ? `${pick(TOPIC_STYLES)} ${pick(TOPIC_CRAFTS)}` : `${syllableWord()} ${pick(TOPIC_SERIES)}`),
};

// One key per entity: importGraph folds names with the same key into one entity.
const usedKeys = new Set(['anima', 'you', ...HUBS.map((h) => nameKey(h.name))]);
function uniqueName(kind: keyof typeof NAME_FOR): string {
  for (let attempt = 0; ; attempt++) {
    let name = NAME_FOR[kind]();
    // First + last pairs run out first: a middle initial, as people write to tell two apart.
    if (attempt >= 20 && kind === 'person' && name.includes(' ')) name = name.replace(' ', ` ${String.fromCharCode(65 + Math.floor(rand() * 26))}. `);
    if (attempt >= 40) name = `${name} ${syllableWord()}`;
    const key = nameKey(name);
    if (!usedKeys.has(key)) {
      usedKeys.add(key);
      return name;
    }
  }
}

// ---- the graph, as graph.import takes it (edges refer to entities by index) ----

interface GenEdge {
  source: number;
  target: number;
  relation: string;
  weight: number;
  validFrom?: string;
  validTo?: string;
}
const genStart = performance.now();
const entities: { name: string; kind: EntityKind }[] = HUBS.map(({ name, kind }) => ({ name, kind }));
const byKind = new Map<EntityKind, number[]>();
const KIND_MIX: [keyof typeof NAME_FOR, number][] = [
  ['person', 0.42],
  ['place', 0.16],
  ['org', 0.14],
  ['thing', 0.14],
  ['topic', 0.14],
];
for (let i = H; i < N; i++) {
  let r = rand();
  const kind = KIND_MIX.find(([, share]) => (r -= share) < 0)?.[0] ?? 'topic';
  entities.push({ name: uniqueName(kind), kind });
  if (!byKind.has(kind)) byKind.set(kind, []);
  byKind.get(kind)!.push(i);
}
const ofKind = (kind: EntityKind) => byKind.get(kind) ?? [];

const edges: GenEdge[] = [];
const coMentioned = new Set<string>();
const related = new Set<string>();
function coMention(a: number, b: number, weight: number): boolean {
  if (a === b || edges.length >= E) return false;
  const key = a < b ? `${a}:${b}` : `${b}:${a}`;
  if (coMentioned.has(key)) return false;
  coMentioned.add(key);
  edges.push({ source: a, target: b, relation: 'co_mention', weight });
  return true;
}
function relate(source: number, target: number, relation: string, time: { validFrom?: string; validTo?: string } = {}): boolean {
  const key = `${source}:${target}:${relation}`;
  if (source === target || related.has(key) || edges.length >= E) return false;
  related.add(key);
  edges.push({ source, target, relation, weight: 1 + Math.floor(rand() * 3), ...time });
  return true;
}

// The hubs among themselves: the strongest edges of the graph.
for (let a = 0; a < H; a++) for (let b = a + 1; b < H; b++) coMention(a, b, 100 + Math.floor(rand() * 900));
// Each hub with a share of everyone else; entities met early (the well-known ones) more often.
for (let h = 0; h < H; h++) {
  for (let i = H; i < N; i++) if (rand() < Math.min(1, 2 * HUBS[h]!.share * (1 - i / N))) coMention(h, i, heavyTail(2, 1.2, 5000));
}

// Typed relations, as the background model would write them: the person's own with their history…
const you = hub('the person');
relate(you, hub('city'), 'lives_in', { validFrom: '2019-03-01' });
relate(you, hub('hometown'), 'lives_in', { validFrom: '1992-01-01', validTo: '2012-09-01' });
relate(you, hub('employer'), 'works_at', { validFrom: '2018-06-01' });
relate(you, hub('partner'), 'partner_of', { validFrom: '2016-05-14' });
relate(you, hub('best friend'), 'friend_of');
relate(you, hub('mother'), 'child_of');
relate(you, hub('hobby'), 'interested_in', { validFrom: '2020-04-01' });
if (ofKind('org').length) relate(you, ofKind('org')[0]!, 'works_at', { validFrom: '2012-10-01', validTo: '2018-05-31' });
// …and everyone else's: sources and targets of the right kinds, popular ones more often.
const RELATIONS: [EntityKind, string, EntityKind][] = [
  ['person', 'lives_in', 'place'],
  ['person', 'works_at', 'org'],
  ['person', 'friend_of', 'person'],
  ['person', 'sibling_of', 'person'],
  ['person', 'colleague_of', 'person'],
  ['person', 'member_of', 'org'],
  ['person', 'interested_in', 'topic'],
  ['person', 'owns', 'thing'],
  ['place', 'located_in', 'place'],
  ['org', 'located_in', 'place'],
  ['thing', 'made_by', 'org'],
];
const TIMED = new Set(['lives_in', 'works_at', 'member_of', 'owns']);
const day = (t: number) => new Date(t).toISOString().slice(0, 10);
const typedTarget = edges.length + Math.round(E * TYPED_SHARE);
for (let attempts = 0; edges.length < typedTarget && attempts < E * 10; attempts++) {
  const [fromKind, relation, toKind] = pick(RELATIONS);
  if (!ofKind(fromKind).length || !ofKind(toKind).length) continue;
  let time: { validFrom?: string; validTo?: string } = {};
  if (TIMED.has(relation) && rand() < 0.5) {
    // Since some day between 2005 and 2024; a third of them over (a move, a job left).
    const from = Date.UTC(2005, 0, 1) + rand() * 20 * 365 * 86_400_000;
    const to = from + (0.5 + rand() * 6) * 365 * 86_400_000;
    time = rand() < 0.33 && to < Date.now() ? { validFrom: day(from), validTo: day(to) } : { validFrom: day(from) };
  }
  relate(pickPopular(ofKind(fromKind)), pickPopular(ofKind(toKind)), relation, time);
}

// Preferential attachment for the rest: each newcomer is mentioned with a few earlier entities,
// chosen in proportion to how many they are already mentioned with (a power-law degree
// distribution), with a little uniform choice so that no newcomer is out of reach.
const endpoints: number[] = [];
const attach = (a: number, b: number) => {
  if (coMention(a, b, heavyTail(1, 1.6, 500))) endpoints.push(a, b);
};
const perNode = Math.max(0, E - edges.length) / Math.max(1, N - H);
for (let i = H + 1; i < N && edges.length < E; i++) {
  const k = Math.min(i - H, Math.floor(perNode) + (rand() < perNode % 1 ? 1 : 0));
  for (let tries = 0, made = 0; made < k && tries < 4 * k; tries++) {
    const before = edges.length;
    attach(i, endpoints.length && rand() > 0.2 ? pick(endpoints) : H + Math.floor(rand() * (i - H)));
    if (edges.length > before) made++;
  }
}
// Pairs a newcomer already had are skipped above; the last edges join random entities to popular ones.
while (edges.length < E) attach(H + Math.floor(rand() * (N - H)), endpoints.length ? pick(endpoints) : H + Math.floor(rand() * (N - H)));
const genMs = performance.now() - genStart;

/**
 * graph.import calls within the API's limits. Entities go in creation order, each with the edges
 * to earlier ones, so an edge's entities are always in its call or an earlier one; an entity from an
 * earlier call is listed again by name and resolves to itself. One call when everything fits.
 */
function importChunks(): { entities: { name: string; kind: EntityKind }[]; edges: GenEdge[] }[] {
  const byNewer: GenEdge[][] = entities.map(() => []);
  for (const e of edges) byNewer[Math.max(e.source, e.target)]!.push(e);
  const chunks: ReturnType<typeof importChunks> = [];
  let local = new Map<number, number>();
  let chunk: ReturnType<typeof importChunks>[number] = { entities: [], edges: [] };
  const indexOf = (i: number) => {
    let at = local.get(i);
    if (at === undefined) {
      local.set(i, (at = chunk.entities.length));
      chunk.entities.push(entities[i]!);
    }
    return at;
  };
  for (let i = 0; i < entities.length; i++) {
    const bucket = byNewer[i]!;
    const newEntities = new Set([i, ...bucket.flatMap((e) => [e.source, e.target])].filter((x) => !local.has(x))).size;
    if (chunk.entities.length && (chunk.entities.length + newEntities > IMPORT_MAX_ENTITIES || chunk.edges.length + bucket.length > IMPORT_MAX_EDGES)) {
      chunks.push(chunk);
      chunk = { entities: [], edges: [] };
      local = new Map();
    }
    indexOf(i);
    for (const e of bucket) chunk.edges.push({ ...e, source: indexOf(e.source), target: indexOf(e.target) });
  }
  if (chunk.entities.length) chunks.push(chunk);
  return chunks;
}
const chunks = importChunks();

// ---- build, query, detect ----

const t0 = performance.now();
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-bench-graph-'));
const db = await openDatabase(scratch);
let result: Record<string, unknown>;
let summary: string[];
try {
  const store = new EntityStore(db, { conversations: new Conversations(db), memories: new MemoryStore(db) });

  let validateMs = 0;
  let buildMs = 0;
  for (const chunk of chunks) {
    const v = performance.now();
    const input = parseInput('graph.import', chunk);
    validateMs += performance.now() - v;
    const b = performance.now();
    await store.importGraph(input);
    buildMs += performance.now() - b;
  }
  // The generator's structures (a million objects at 100k entities) are the bench's, not the app's:
  // let go of what the timings below no longer need, so the collector's pauses in the timed
  // recordings are those of a process holding what the app holds.
  const importCalls = chunks.length;
  const smallGraph = {
    entities: entities.slice(0, Math.min(1000, N)),
    edges: edges.filter((e) => e.source < 1000 && e.target < 1000).slice(0, IMPORT_MAX_EDGES),
  };
  chunks.length = 0;
  edges.length = 0;
  endpoints.length = 0;
  coMentioned.clear();
  related.clear();

  const count = async (sql: string) => Number((await db.query<{ n: number }>(sql)).rows[0]?.n ?? 0);
  const entityCount = await count(`SELECT count(*)::int AS n FROM entities WHERE status = 'active'`);
  const edgeCount = await count(`SELECT count(*)::int AS n FROM entity_edges`);
  const typedCount = await count(`SELECT count(*)::int AS n FROM entity_edges WHERE relation <> 'co_mention'`);
  const degrees = (
    await db.query<{ id: number; n: number }>(
      `SELECT id, count(*)::int AS n FROM (SELECT source_id AS id FROM entity_edges UNION ALL SELECT target_id FROM entity_edges) x GROUP BY id`,
    )
  ).rows.map((r) => ({ id: Number(r.id), n: r.n }));
  const idOfKey = new Map(
    (await db.query<{ id: number; name_key: string }>(`SELECT id, name_key FROM entities WHERE status = 'active'`)).rows.map((r) => [r.name_key, Number(r.id)]),
  );
  const idOf = (i: number) =>
    entities[i]!.kind === 'user' ? USER_ENTITY_ID : entities[i]!.kind === 'self' ? SELF_ENTITY_ID : idOfKey.get(nameKey(entities[i]!.name));
  const degreeOf = new Map(degrees.map((d) => [d.id, d.n]));
  const hubDegrees = HUBS.map((h, i) => ({ role: h.role, name: h.name, degree: degreeOf.get(idOf(i) ?? 0) ?? 0 }));

  // Every hub, then random others; in shuffled order so the hubs are not all measured first.
  const sample = new Set<number>(HUBS.map((_, i) => idOf(i)!));
  const others = entities.map((_, i) => i).slice(H);
  while (sample.size < QUERIES && others.length) {
    const id = idOf(others.splice(Math.floor(rand() * others.length), 1)[0]!);
    if (id !== undefined) sample.add(id);
  }
  const order = [...sample];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const hubIds = new Set(HUBS.map((_, i) => idOf(i)));
  // As graph.view with a centre: valid at now, 2 hops, 300 entities.
  const ego = (id: number) => store.ego(id, { at: new Date().toISOString(), hops: 2, limit: 300 });
  for (const id of order.slice(0, 5)) await ego(id);
  const egoMs: number[] = [];
  const hubMs: number[] = [];
  const egoNodes: number[] = [];
  const egoEdges: number[] = [];
  for (const id of order) {
    const start = performance.now();
    const view = await ego(id);
    const ms = performance.now() - start;
    egoMs.push(ms);
    if (hubIds.has(id)) hubMs.push(ms);
    egoNodes.push(view.nodes.length);
    egoEdges.push(view.edges.length);
  }

  // Detection, as recordMentions runs it on each stored message; the libraries load first.
  warmMentionDetection();
  for (const text of [...englishTexts.slice(0, 20), ...CHINESE_TEXTS.slice(0, 5)]) await detectMentionsAsync(text);
  const detect = async (texts: string[]) => {
    const ms: number[] = [];
    let names = 0;
    for (const text of texts) {
      const start = performance.now();
      const found = await detectMentionsAsync(text);
      ms.push(performance.now() - start);
      names += found.length;
    }
    return { ms, names };
  };
  const en = await detect(englishTexts);
  const zh = await detect(CHINESE_TEXTS);
  const mentionMs = [...en.ms, ...zh.ms];

  // The mention corpus: precision and recall of the names detected, and recording per message at two sizes.
  let mentionResult: Record<string, unknown> = {};
  let mentionSummary: string[] = [];
  if (corpus) {
    const detected = corpus.map((sentence) => detectMentions(sentence.text));
    const confident = new Set(
      detected
        .flat()
        .filter((m) => m.confidence !== 'low')
        .map((m) => nameKey(m.name)),
    );
    let tp = 0;
    let fp = 0;
    let fn = 0;
    let kindRight = 0;
    const misses: string[] = [];
    const extras: string[] = [];
    corpus.forEach((sentence, i) => {
      const got = new Map(detected[i]!.filter((m) => m.confidence !== 'low' || confident.has(nameKey(m.name))).map((m) => [nameKey(m.name), m.kind]));
      const want = new Map(sentence.entities.map((e) => [nameKey(e.name), e.kind]));
      for (const [key, kind] of got) {
        if (want.has(key)) {
          tp++;
          if (want.get(key) === kind || kind === 'thing') kindRight++;
        } else {
          fp++;
          extras.push(key);
        }
      }
      for (const key of want.keys()) {
        if (got.has(key)) continue;
        fn++;
        misses.push(key);
      }
    });
    const precision = tp / Math.max(1, tp + fp);
    const recall = tp / Math.max(1, tp + fn);

    // Messages: 150 naming entities of the first 1,000 (in both graphs), 150 corpus sentences and LoCoMo turns.
    const known = entities.slice(H, Math.min(1000, N)).map((e) => e.name);
    const recordTexts: string[] = [];
    for (let i = 0; i < 150; i++) recordTexts.push(`Yesterday I met ${pick(known)} and ${pick(known)}, and we talked about ${pick(known)}.`);
    for (let i = 0; i < 150; i++) recordTexts.push(i % 2 ? corpus[i % corpus.length]!.text : englishTexts[(i * 7) % englishTexts.length]!);
    const record = async (store: EntityStore) => {
      const conversations = store.sources.conversations as Conversations;
      const conversationId = (await conversations.create('bench')).id;
      const ms: number[] = [];
      const cpu: number[] = [];
      for (const [i, text] of recordTexts.entries()) {
        const message = await conversations.append({ conversationId, role: 'user', content: text, status: 'complete' });
        const start = performance.now();
        const cpuStart = process.cpuUsage();
        // The graph indexer's call for a stored message (indexer.ts indexMany): the row it read gives
        // the text, the time and the role, so the recording reads no message of its own.
        await store.recordMentionsBatch([{ messageId: message.id, text: message.content, at: new Date(message.createdAt), role: message.role }]);
        // The first 20 warm the caches and the planner; the rest are measured.
        if (i < 20) continue;
        ms.push(performance.now() - start);
        // The process's CPU time for the call (PGlite runs in this thread): what a shared, loaded machine does not inflate.
        const used = process.cpuUsage(cpuStart);
        cpu.push((used.user + used.system) / 1000);
      }
      return { ms, cpu };
    };
    // Small: the first 1,000 entities and the edges among them, in a folder of its own.
    const smallDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-bench-graph-small-'));
    const smallDb = await openDatabase(smallDir);
    let smallMs: number[];
    let smallCpu: number[];
    try {
      const smallStore = new EntityStore(smallDb, { conversations: new Conversations(smallDb), memories: new MemoryStore(smallDb) });
      await smallStore.importGraph(parseInput('graph.import', smallGraph));
      ({ ms: smallMs, cpu: smallCpu } = await record(smallStore));
    } finally {
      await smallDb.close();
      fs.rmSync(smallDir, { recursive: true, force: true });
    }
    const { ms: largeMs, cpu: largeCpu } = await record(store);
    const rp = (list: number[]) => ({ p50: round(percentile(list, 50), 2), p95: round(percentile(list, 95), 2) });
    mentionResult = {
      mention_precision: round(precision, 3),
      mention_recall: round(recall, 3),
      mention_sentences: corpus.length,
      mention_kind_agreement: round(kindRight / Math.max(1, tp), 3),
      record_ms_small: { ...rp(smallMs), entities: Math.min(1000, N) },
      record_ms_large: { ...rp(largeMs), entities: entityCount },
      record_ratio_p95: round(percentile(largeMs, 95) / Math.max(0.001, percentile(smallMs, 95)), 2),
      record_cpu_ms_small: rp(smallCpu),
      record_cpu_ms_large: rp(largeCpu),
    };
    mentionSummary = [
      `mention corpus (${corpus.length} sentences): precision ${precision.toFixed(3)}, recall ${recall.toFixed(3)} (${tp} found, ${fp} extra, ${fn} missed); kinds agree ${(kindRight / Math.max(1, tp)).toFixed(3)}`,
      `  missed: ${misses.slice(0, 20).join(', ')}${misses.length > 20 ? ', …' : ''}; extra: ${extras.slice(0, 20).join(', ')}${extras.length > 20 ? ', …' : ''}`,
      `recordMentions per message (${largeMs.length} messages): ${Math.min(1000, N).toLocaleString('en')} entities p50 ${percentile(smallMs, 50).toFixed(2)} ms, p95 ${percentile(smallMs, 95).toFixed(2)} ms; ` +
        `${entityCount.toLocaleString('en')} entities p50 ${percentile(largeMs, 50).toFixed(2)} ms, p95 ${percentile(largeMs, 95).toFixed(2)} ms`,
      `  CPU time of the process per message: p50 ${percentile(smallCpu, 50).toFixed(2)} / p95 ${percentile(smallCpu, 95).toFixed(2)} ms small, ` +
        `p50 ${percentile(largeCpu, 50).toFixed(2)} / p95 ${percentile(largeCpu, 95).toFixed(2)} ms large; load average ${os.loadavg()[0]!.toFixed(1)}`,
    ];
  }

  const p = (list: number[], digits: number) => ({ p50: round(percentile(list, 50), digits), p95: round(percentile(list, 95), digits) });
  const maxDegree = Math.max(...degrees.map((d) => d.n));
  result = {
    ego_ms: p(egoMs, 2),
    mention_ms: p(mentionMs, 3),
    entities: entityCount,
    edges: edgeCount,
    build_ms: Math.round(buildMs),
    import_calls: importCalls,
    validate_ms: Math.round(validateMs),
    generate_ms: Math.round(genMs),
    typed_edges: typedCount,
    ego_queries: egoMs.length,
    ego_ms_hubs: { p50: round(percentile(hubMs, 50), 2), max: round(Math.max(...hubMs), 2) },
    ego_nodes_median: median(egoNodes),
    mention_ms_en: { ...p(en.ms, 3), texts: en.ms.length, names: en.names },
    mention_ms_zh: { ...p(zh.ms, 3), texts: zh.ms.length, names: zh.names },
    hubs: hubDegrees,
    max_degree: maxDegree,
    median_degree: median(degrees.map((d) => d.n)),
    ...mentionResult,
    node: process.version,
    cpus: os.cpus().length,
    load_average: round(os.loadavg()[0]!, 1),
  };
  const ms = (list: number[], digits = 2) => `p50 ${percentile(list, 50).toFixed(digits)} ms, p95 ${percentile(list, 95).toFixed(digits)} ms`;
  summary = [
    `\nEntity graph — ${entityCount.toLocaleString('en')} active entities, ${edgeCount.toLocaleString('en')} edges (${typedCount.toLocaleString('en')} typed relations)` +
      (entityCount !== N || edgeCount !== E ? `; generated ${N} entities and ${E} edges` : ''),
    `build: importGraph ${(buildMs / 1000).toFixed(1)} s in ${importCalls} call(s) (${Math.round(buildMs)} ms; schema check ${Math.round(validateMs)} ms, generation ${Math.round(genMs)} ms, not included)`,
    `degrees: median ${median(degrees.map((d) => d.n))}, max ${maxDegree}; hubs: ${hubDegrees.map((h) => `${h.role} ${h.degree}`).join(', ')}`,
    `ego (graph.view: 2 hops, limit 300, at now): ${egoMs.length} queries, ${ms(egoMs)}, max ${Math.max(...egoMs).toFixed(2)} ms; ` +
      `hubs p50 ${percentile(hubMs, 50).toFixed(2)} ms, max ${Math.max(...hubMs).toFixed(2)} ms; median view ${median(egoNodes)} entities, ${median(egoEdges)} edges`,
    `mentions (detectMentionsAsync, per message): ${en.ms.length} LoCoMo turns median ${median(en.ms).toFixed(3)} ms (${ms(en.ms, 3)}, ${en.names} names); ` +
      `${zh.ms.length} Chinese sentences median ${median(zh.ms).toFixed(3)} ms (${ms(zh.ms, 3)}, ${zh.names} names); all ${ms(mentionMs, 3)}`,
    ...mentionSummary,
    `total ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  ];
} finally {
  await db.close();
  fs.rmSync(scratch, { recursive: true, force: true });
}

for (const line of summary) console.log(line);
console.log(JSON.stringify(result));
if (values.json) {
  const file = path.resolve(String(values.json));
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`written to ${path.relative(process.cwd(), file).startsWith('..') ? file : path.relative(process.cwd(), file)}`);
}
