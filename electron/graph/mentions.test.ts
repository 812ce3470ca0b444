import { describe, expect, it } from 'vitest';
import { detectMentions, detectMentionsAsync, isPlausibleName, isRefusedName } from './mentions.js';

const found = (text: string) => detectMentions(text).map((m) => `${m.kind}:${m.name}`);

describe('detectMentions — Latin script (rules + lexicon)', () => {
  it('finds people, places and organisations, without kinship words or trailing punctuation', () => {
    const text = 'My sister Ana moved to Lisbon to work at Nimbus Labs.';
    const mentions = detectMentions(text);
    expect(mentions).toEqual([
      { name: 'Ana', kind: 'person', start: 10, end: 13 },
      { name: 'Lisbon', kind: 'place', start: 23, end: 29 },
      { name: 'Nimbus Labs', kind: 'org', start: 41, end: 52 },
    ]);
    for (const m of mentions) expect(text.slice(m.start, m.end)).toBe(m.name);
  });

  it('drops honorifics, possessives and articles, keeps initials, splits lists', () => {
    expect(found('I met Dr. John Smith in New York.')).toEqual(['person:John Smith', 'place:New York']);
    expect(found("We visited Paris, France with Google's team.")).toEqual(['place:Paris', 'place:France', 'org:Google']);
    expect(found('I read George R. R. Martin on the way to The Cliffs of Moher.')).toEqual(['person:George R. R. Martin', 'place:Cliffs of Moher']);
    expect(found('J.K. Rowling wrote it.')).toEqual(['person:J.K. Rowling']);
  });

  it('finds names in chat lines like the LoCoMo turns', () => {
    expect(found('Hey Mel! Good to see you! How have you been?')).toEqual(['person:Mel']);
    expect(found("Wow, that's cool, Caroline! What happened that was so awesome?")).toEqual(['person:Caroline']);
  });

  it('finds nothing in text without names: pronouns, "I", greetings, emoji, punctuation', () => {
    expect(detectMentions('I love it. Hey, how are you? Thanks!')).toEqual([]);
    expect(detectMentions('😀😀😀')).toEqual([]);
    expect(detectMentions('!!! ... ???')).toEqual([]);
    expect(detectMentions('')).toEqual([]);
    expect(detectMentions('   \n ')).toEqual([]);
  });

  it('offsets are UTF-16 positions even after emoji and accents', () => {
    const text = 'The café 😀 in Zürich is owned by José Núñez.';
    for (const m of detectMentions(text)) expect(text.slice(m.start, m.end)).toBe(m.name);
    expect(found(text)).toEqual(['place:Zürich', 'person:José Núñez']);
  });
});

describe('detectMentions — Chinese (jieba tags)', () => {
  it('finds places (ns), organisations (nt) and people (nr, and unknown words with a surname)', () => {
    const text = '我妹妹在上海的华为工作。';
    expect(detectMentions(text)).toEqual([
      { name: '上海', kind: 'place', start: 4, end: 6 },
      { name: '华为', kind: 'org', start: 7, end: 9 },
    ]);
    expect(found('小明昨天和王芳去了北京大学。')).toEqual(['person:小明', 'person:王芳', 'org:北京大学']);
    expect(found('张伟下个月要搬到深圳，他在腾讯找到了新工作。')).toEqual(['person:张伟', 'place:深圳', 'org:腾讯']);
    expect(found('我对象叫李娜，她是医生，在协和医院上班。')).toEqual(['person:李娜', 'org:协和医院']);
    expect(found('下周我要去日本东京出差。')).toEqual(['place:日本', 'place:东京']);
  });

  it('leaves out ordinary words the dictionary tags as names or places', () => {
    // 明白 and 谢谢 are "nr" in jieba's dictionary, 阳光明媚 too; 东西 ("stuff") is "ns".
    expect(detectMentions('我明白了，谢谢你的建议。')).toEqual([]);
    expect(detectMentions('今天天气很好，阳光明媚，我们去公园散步吧。')).toEqual([]);
    expect(detectMentions('我买了很多东西。')).toEqual([]);
    expect(detectMentions('我妈妈做的红烧肉最好吃了。')).toEqual([]);
  });
});

describe('detectMentions — mixed text', () => {
  it('runs both libraries, with offsets into the whole text', () => {
    const text = 'Ana 在 Lisbon 的 Nimbus Labs 上班，她和张伟是同事。';
    const mentions = detectMentions(text);
    expect(mentions.map((m) => `${m.kind}:${m.name}`)).toEqual(['person:Ana', 'place:Lisbon', 'org:Nimbus Labs', 'person:张伟']);
    for (const m of mentions) expect(text.slice(m.start, m.end)).toBe(m.name);
    // Without spaces, the Latin names still come apart.
    expect(found('Ana在Lisbon上班')).toEqual(['person:Ana', 'place:Lisbon']);
    expect(found('我和Caroline去了New York')).toEqual(['person:Caroline', 'place:New York']);
  });
});

describe('long text', () => {
  it('is read in pieces with the same result and correct offsets', async () => {
    const sentence = 'Yesterday Ana met Tom in Lisbon and they talked for hours about nothing much. ';
    const text = sentence.repeat(120); // ~9,500 characters
    const all = await detectMentionsAsync(text);
    expect(all.length).toBe(3 * 120);
    for (const m of all) expect(text.slice(m.start, m.end)).toBe(m.name);
  });
});

describe('isPlausibleName', () => {
  it('refuses junk', () => {
    expect(isPlausibleName('I')).toBe(false);
    expect(isPlausibleName('She')).toBe(false);
    expect(isPlausibleName('🎉')).toBe(false);
    expect(isPlausibleName('...')).toBe(false);
    expect(isPlausibleName('x'.repeat(121))).toBe(false);
    expect(isPlausibleName('王')).toBe(false);
    expect(isPlausibleName('Ana')).toBe(true);
    expect(isPlausibleName('王芳')).toBe(true);
  });
});

describe('isRefusedName', () => {
  it('refuses what the mention rules never take for a name on its own, in any case, and nothing that is a name', () => {
    for (const word of ['Saturday', 'saturday', 'January', 'December', 'Christmas', 'Tonight', 'English', 'You', 'Mom', ' Sunday ', '王', '...']) {
      expect(isRefusedName(word), word).toBe(true);
    }
    for (const name of ['Ana', 'Lisbon', 'Saturday Market', 'June Carter', 'Nimbus Labs', '王芳']) expect(isRefusedName(name), name).toBe(false);
    // The mention rules agree: a weekday or a month alone is never found as a name.
    expect(found('We met Ana on Saturday in January.')).toEqual(['person:Ana']);
  });
});
