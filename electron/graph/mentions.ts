// Entity mentions at write time, without a model: people, places and organisations named in a
// message or memory, found by rules and two well-kept libraries so the graph grows during the day.
//   - Latin script (English, Czech, Polish, German…): capitalised runs judged by rules and by
//     compromise's lexicon read as a dictionary (mentions-latin.ts). compromise's tagger used to run
//     here: ~20 ms for a 1,000-character assistant turn, most of the graph's cost on a long import,
//     and it never found names it did not know ("Brno", "Pepík", "Marek").
//   - Chinese: jieba's part-of-speech tags — nr/nrt/nrfg person, ns place, nt organisation. jieba-rs
//     tags every word that is not in its dictionary 'x', and most personal names are not in it
//     ("王芳", "小明"), so an unknown 2–3 character word that starts with a common surname (or 小/老/阿
//     + one character) counts as a person. The dictionary's nr list is noisy (明白, 阳光, 道德 are
//     "nr"), so a dictionary nr word counts only when it starts with a common surname or is a
//     transliteration (nrt). A few well-known companies the dictionary tags as names or common
//     nouns (华为 nr, 腾讯 nz) are re-tagged nt.
// Mixed text runs both: the Latin rules see each stretch between CJK runs, jieba the whole text.
//
// Cost, measured on 2,011 LongMemEval turns (median ~1,000 characters): see docs/mentions.md.
// Both libraries load on first use (compromise ~0.35 s, jieba's dictionary ~0.2 s), never at import.
import { createRequire } from 'node:module';
import { isLatinStopWord, latinMentions, latinSelfNames, type Dictionary, type Lexicon, type MentionKind } from './mentions-latin.js';

export type { MentionKind };

export interface Mention {
  /** The name as written, cleaned (no honorific, possessive or trailing punctuation). */
  name: string;
  kind: MentionKind;
  /** UTF-16 offsets into the text (what String.slice takes). */
  start: number;
  end: number;
  /** 'low': a lone unknown word at a sentence start — recorded only for a name the graph already has (or has seen before). */
  confidence?: 'high' | 'low';
}

/** Longer "names" are sentences the tagger ran together, not names. */
export const MAX_NAME_CHARS = 120;

// ---- library loading ----

interface CompromiseTerm {
  tags: string[];
}
interface CompromiseView {
  json(opts: object): { terms: CompromiseTerm[] }[];
}
type Compromise = ((text: string) => CompromiseView) & { world(): { model: { one: { lexicon: Lexicon } } } };

interface TaggedWord {
  word: string;
  tag: string;
}
interface JiebaTagger {
  tag(text: string, hmm?: boolean): TaggedWord[];
}

const require = createRequire(import.meta.url);
let compromise: Compromise | null | undefined;
let jieba: JiebaTagger | null | undefined;
let warned = false;

function warnOnce(what: string, err: unknown): void {
  if (warned) return;
  warned = true;
  console.warn(`[anima warn] entity mentions: ${what} is unavailable: ${(err as Error).message}`);
}

function loadCompromise(): Compromise | null {
  if (compromise !== undefined) return compromise;
  try {
    // The CommonJS build: one file, loads in ~0.35 s where the ES module tree takes ~0.65 s.
    compromise = require('compromise') as Compromise;
  } catch (err) {
    warnOnce('English (compromise)', err);
    compromise = null;
  }
  return compromise;
}

// Companies the dictionary tags as names, places or common nouns (华为 nr, 腾讯 nz, 京东 ns), re-tagged
// nt after tagging — jieba-rs's loadDict does not replace the tag of a word it already has. Only
// unambiguous company names: 小米 (millet) and 苹果 (apple) stay as they are.
const ORG_FIXES = new Set([
  '华为',
  '腾讯',
  '阿里巴巴',
  '百度',
  '京东',
  '网易',
  '新浪',
  '搜狐',
  '字节跳动',
  '美团',
  '拼多多',
  '滴滴出行',
  '比亚迪',
  '海尔',
  '中兴',
  '联想集团',
  '微软',
  '谷歌',
  '亚马逊',
  '特斯拉',
  '星巴克',
  '麦当劳',
  '肯德基',
  '宜家',
]);

function loadJieba(): JiebaTagger | null {
  if (jieba !== undefined) return jieba;
  try {
    // A second instance beside electron/memory/segment.ts's (which only exposes cut): ~40 MB and
    // ~0.2 s, paid once, on the first Chinese text.
    const { Jieba } = require('@node-rs/jieba') as { Jieba: { withDict(dict: Uint8Array): JiebaTagger } };
    const { dict } = require('@node-rs/jieba/dict.js') as { dict: Uint8Array };
    jieba = Jieba.withDict(dict);
  } catch (err) {
    warnOnce('Chinese (jieba)', err);
    jieba = null;
  }
  return jieba;
}

/**
 * Loads both libraries now (~0.35 s for compromise, ~0.2 s for jieba's dictionary, on the calling
 * thread). Otherwise the first text that needs one pays for it, in the graph queue after its write.
 */
export function warmMentionDetection(): void {
  lexicon();
  loadJieba()?.tag('我在上海。', true);
}

let dictionary: Dictionary | null | undefined;
/** Guesses for words the lexicon lacks, kept (a few thousand distinct words at most in practice). */
const guesses = new Map<string, boolean>();
const MAX_GUESSES = 50_000;

/**
 * compromise's lexicon (lower-case words and phrases, "costa rica", to their tags), and its guess
 * for a word the lexicon lacks — tagging that one word (~0.1 ms, then remembered): only a singular
 * noun may be a name ("brno" yes; "excellent", "identify", "websites" no).
 */
function lexicon(): Dictionary | null {
  if (dictionary !== undefined) return dictionary;
  try {
    const nlp = loadCompromise();
    dictionary = nlp
      ? {
          lex: nlp.world().model.one.lexicon,
          mayBeName(word) {
            let g = guesses.get(word);
            if (g === undefined) {
              const tags = nlp(word).json({ terms: { offset: false } })[0]?.terms[0]?.tags ?? [];
              g = tags.includes('Singular') && !tags.some((t) => t === 'Adjective' || t === 'Verb' || t === 'Adverb' || t === 'Plural');
              if (guesses.size >= MAX_GUESSES) guesses.clear();
              guesses.set(word, g);
            }
            return g;
          },
        }
      : null;
  } catch (err) {
    warnOnce('English (compromise lexicon)', err);
    dictionary = null;
  }
  return dictionary;
}

// ---- junk ----

const CJK = /[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]/;
// Text between CJK runs (CJK punctuation and full-width forms count as CJK here).
const LATIN_STRETCH = /[^\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]+/g;

// Words that are never a name on their own, whatever the tagger says: pronouns ("I" above all),
// greetings and interjections at the start of a chat line, kinship and titles without a name, and
// "person", the label the sleep's transcripts give the person.
const STOP = new Set(
  (
    'i me my mine myself you your yours yourself he him his she her hers they them their theirs we us our ours it its ' +
    'this that these those who whom whose what which someone somebody everyone everybody anyone nobody ' +
    'hey hi hello hiya yo wow oh ah ooh aww yay yeah yes no nope ok okay thanks thank lol omg haha hmm ' +
    'mom mum dad mother father sister brother son daughter wife husband aunt uncle grandma grandpa ' +
    'mr mrs ms miss dr sir madam god guys dear friend buddy bro person people ' +
    'monday tuesday wednesday thursday friday saturday sunday today tomorrow yesterday'
  ).split(' '),
);

const CJK_STOP = new Set(
  // Common words jieba's dictionary tags as places or names (东西 "stuff" is ns).
  (
    '东西 城市 外国 爱国 平原 国内 国外 中外 南北 东南 西南 全国 各国 本地 当地 外地 老家 家乡 ' +
    '小姐 小伙 小孩 小子 小时 小心 小说 老师 老板 老婆 老公 老人 老家 阿姨 ' +
    '我们 你们 他们 她们 自己 大家 别人'
  ).split(' '),
);

// The most common Chinese surnames (about 85% of people), for telling names from words in jieba's
// unknown ('x') and noisy nr output.
const SURNAMES = new Set(
  '王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤'.split(
    '',
  ),
);

/** A name worth an entity: has a letter, is not a stop word, not too long, not one Latin letter. */
export function isPlausibleName(name: string): boolean {
  const n = name.trim();
  if (n.length === 0 || n.length > MAX_NAME_CHARS) return false;
  if (!/\p{L}/u.test(n)) return false;
  if (STOP.has(n.toLowerCase()) || CJK_STOP.has(n)) return false;
  // One Latin letter ("I", "A") or one CJK character (王, 东) is never enough.
  const letters = n.replace(/[^\p{L}]/gu, '');
  if (letters.length < 2) return false;
  return true;
}

/**
 * A name the mention rules refuse on its own — a weekday or month, a holiday, a pronoun, a greeting,
 * a language, a kinship word alone — or one that is no plausible name at all: nothing to write about
 * as someone or somewhere, whatever a model listed.
 */
export function isRefusedName(name: string): boolean {
  return !isPlausibleName(name) || isLatinStopWord(name);
}

// ---- Latin script ----

function englishMentions(text: string): Mention[] {
  const lex = lexicon();
  if (!lex) return [];
  return latinMentions(text, lex)
    .filter((m) => isPlausibleName(m.name))
    .map(({ confidence, ...m }) => (confidence === 'low' ? { ...m, confidence } : m));
}

// ---- Chinese ----

// jieba's dictionary tags thousands of ordinary words as places or names (东西, 新鲜, 长大 and 西瓜
// are ns; 谢谢, 顾客 and 高潮 are nr, with a surname first). Its real names are mostly famous ones
// (毛泽东, 刘翔), while the people in someone's life are unknown words ('x'). So a dictionary place
// counts only next to a word that says "place" (在上海, 去日本东京, 上海人), and a two-character
// dictionary name only next to one that says "person" (叫李娜, 李娜说).
const PLACE_BEFORE = new Set(
  '在 去 到 从 来自 住 住在 回 回到 飞 飞往 前往 离开 搬 搬到 搬去 逛 游 游览 旅游 出差 留学 位于 路过 经过 来 去了 到了 回了 来到 爬 爬了 于'.split(' '),
);
const PLACE_AFTER = new Set('人 旅游 旅行 出差 留学 工作 上学 读书 生活 定居 玩 之旅 一带 附近 市区 郊区 那边 这边'.split(' '));
const PERSON_BEFORE = new Set(
  (
    '叫 名叫 和 跟 与 同 陪 见 找 问 给 告诉 朋友 同事 同学 室友 邻居 老师 老板 领导 对象 老公 老婆 丈夫 妻子 ' +
    '男朋友 女朋友 男友 女友 妹妹 姐姐 哥哥 弟弟 儿子 女儿 表妹 表姐 表哥 表弟 堂妹 堂姐 堂哥 堂弟'
  ).split(' '),
);
const PERSON_AFTER = new Set('说 问 告诉 觉得 认为 喜欢 讨厌 笑 哭 打电话 发消息 发微信 来了 走了 生日 结婚 怀孕'.split(' '));

// Organisations the dictionary has as generic words.
const ORG_STOP = new Set('国际化 社会科学 天文学 音乐会 音乐厅 中西部 中南部 交易所 商学院 党组织 联合会 国家队 美术馆 高级中学 通讯社'.split(' '));

function chineseMentions(text: string): Mention[] {
  const j = loadJieba();
  if (!j) return [];
  let words: TaggedWord[];
  try {
    words = j.tag(text, true);
  } catch {
    return [];
  }
  // Positions first: jieba returns the text cut into consecutive words; each is looked up from the
  // last end to be safe.
  const spans: { word: string; tag: string; start: number; end: number }[] = [];
  let at = 0;
  for (const { word, tag } of words) {
    const start = text.startsWith(word, at) ? at : text.indexOf(word, at);
    if (start < 0) continue;
    at = start + word.length;
    if (word.trim() === '') continue;
    spans.push({ word, tag: ORG_FIXES.has(word) ? 'nt' : tag, start, end: at });
  }
  const out: Mention[] = [];
  let previousPlace = -1;
  for (let i = 0; i < spans.length; i++) {
    const { word, tag, start, end } = spans[i]!;
    if (!CJK.test(word)) continue;
    const before = [spans[i - 1]?.word, spans[i - 2]?.word];
    const after = spans[i + 1]?.word;
    const kind = chineseKind(word, tag, {
      place: previousPlace === i - 1 || before.some((w) => w !== undefined && PLACE_BEFORE.has(w)) || (after !== undefined && PLACE_AFTER.has(after)),
      person: (before[0] !== undefined && PERSON_BEFORE.has(before[0])) || (after !== undefined && PERSON_AFTER.has(after)),
    });
    if (kind && isPlausibleName(word)) {
      out.push({ name: word, kind, start, end });
      if (kind === 'place') previousPlace = i;
    }
  }
  return out;
}

function chineseKind(word: string, tag: string, cue: { place: boolean; person: boolean }): MentionKind | null {
  const chars = [...word];
  if (chars.length < 2) return null;
  const surname = SURNAMES.has(chars[0]!);
  switch (tag) {
    case 'x':
      // Not in the dictionary: a personal name if it looks like one.
      if (!chars.every((c) => CJK.test(c)) || chars.length > 3) return null;
      if (surname) return 'person';
      if (chars.length === 2 && '小老阿'.includes(chars[0]!)) return 'person';
      // An unknown word where a place or a person is expected: 住在布尔诺, 和佩皮克.
      if (cue.place) return 'place';
      if (cue.person) return 'person';
      return null;
    case 'nr':
    case 'nrfg':
      // A "name" the dictionary does not start with a surname, where a place is expected: 住在布尔诺.
      if (!surname) return cue.place && chars.length >= 3 ? 'place' : null;
      return chars.length >= 3 || cue.person ? 'person' : null;
    case 'nrt':
      // Transliterations: 爱因斯坦, 约翰逊 — but also 多谢, 保姆 and 令人 at two characters.
      if (cue.place && chars.length >= 2) return 'place';
      return chars.length >= 3 && !word.endsWith('人') ? 'person' : null;
    case 'ns':
      return cue.place || (chars.length >= 3 && /[省市县区镇村州]$/.test(word)) ? 'place' : null;
    case 'nt':
      return ORG_STOP.has(word) ? null : 'org';
    default:
      return null;
  }
}

// ---- both ----

/**
 * The entity mentions in a text, in order of appearance, each span once. English via compromise,
 * Chinese via jieba; mixed text through both. Never throws: a library that fails to load or parse
 * yields no mentions (logged once).
 */
export function detectMentions(text: string): Mention[] {
  if (!text || !text.trim()) return [];
  const found: Mention[] = [];
  const cjk = CJK.test(text);
  // Mixed text: compromise reads each stretch between CJK runs on its own, so "Ana在Lisbon" is two
  // names and not one, and its offsets are shifted back into the whole text.
  const stretches = cjk ? [...text.matchAll(LATIN_STRETCH)].map((m) => ({ part: m[0], at: m.index })) : [{ part: text, at: 0 }];
  for (const { part, at } of stretches) {
    if (!/[A-Za-z]/.test(part)) continue;
    try {
      for (const m of englishMentions(part)) found.push({ ...m, start: m.start + at, end: m.end + at });
    } catch (err) {
      warnOnce('English tagging', err);
    }
  }
  if (cjk) found.push(...chineseMentions(text));
  found.sort((a, b) => a.start - b.start || b.end - a.end);
  // Overlapping spans (both libraries on mixed text): the first, longest one wins.
  const out: Mention[] = [];
  for (const m of found) {
    const prev = out[out.length - 1];
    if (prev && m.start < prev.end) continue;
    out.push(m);
  }
  return out;
}

const SELF_ZH = /(?:我叫|我的名字是|我的名字叫|叫我)\s*([\u3400-\u4dbf\u4e00-\u9fff]{2,4}?)(?=[，,。.！!？?、；;\s]|$|[吧啊呀哦呢])/gu;

/**
 * The names a text's writer gives themself: "I'm Marek", "my name is Ana Novák", "call me Pepík",
 * "我叫马雷克". For the person's own messages: their name becomes an alias of the person ("You").
 */
export function selfNames(text: string): string[] {
  const out: string[] = [];
  const lex = lexicon();
  if (lex && /[A-Za-z]/.test(text)) out.push(...latinSelfNames(text, lex));
  if (CJK.test(text)) for (const m of text.matchAll(SELF_ZH)) out.push(m[1]!);
  return [...new Set(out)].filter((n) => isPlausibleName(n));
}

/** Texts longer than this are read in pieces, with a turn of the event loop between them. */
const CHUNK_CHARS = 2000;

/**
 * detectMentions for text of any length without holding the event loop: a pasted document is read
 * in ~2,000-character pieces cut at a sentence end or a space (a name is never cut in two unless a
 * piece has neither), yielding between pieces so chat and streaming go on.
 */
export async function detectMentionsAsync(text: string): Promise<Mention[]> {
  if (text.length <= CHUNK_CHARS) return detectMentions(text);
  const out: Mention[] = [];
  for (let from = 0; from < text.length;) {
    let to = Math.min(text.length, from + CHUNK_CHARS);
    if (to < text.length) {
      const window = text.slice(from + CHUNK_CHARS / 2, to);
      const cut = Math.max(window.search(/[.!?。！？\n][^.!?。！？\n]*$/), window.lastIndexOf(' '));
      if (cut >= 0) to = from + CHUNK_CHARS / 2 + cut + 1;
    }
    for (const m of detectMentions(text.slice(from, to))) out.push({ ...m, start: m.start + from, end: m.end + from });
    from = to;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return out;
}
