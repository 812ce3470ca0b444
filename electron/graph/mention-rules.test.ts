// The mention rules without a tagger (mentions-latin.ts, the Chinese cues in mentions.ts): one case
// per rule, English and Chinese, and the writer's own name.
import { describe, expect, it } from 'vitest';
import { detectMentions, selfNames } from './mentions.js';

const found = (text: string) => detectMentions(text).map((m) => `${m.kind}:${m.name}${m.confidence === 'low' ? '?' : ''}`);

describe('Latin-script names by rule', () => {
  it('finds capitalised unknown words in running text, with diacritics (Czech, Polish, German)', () => {
    expect(found('I went to Brno with Pepík last weekend.')).toEqual(['place:Brno', 'person:Pepík']);
    expect(found('We met Łukasz Wiśniewski and Jürgen Müller in Kraków.')).toEqual(['person:Łukasz Wiśniewski', 'person:Jürgen Müller', 'place:Kraków']);
    expect(found('Yesterday Zuzana showed me photos from Žižkov.')).toEqual(['person:Zuzana', 'place:Žižkov']);
  });

  it('keeps multi-word names together, with connectors inside and a place or org word at an end', () => {
    expect(found('My cousin got into the University of Michigan.')).toEqual(['org:University of Michigan']);
    expect(found('We hiked around Lake Tahoe and ate at Café Slavia.')).toEqual(['place:Lake Tahoe', 'org:Café Slavia']);
    expect(found('I visited Český Krumlov with Karel Novotný.')).toEqual(['place:Český Krumlov', 'person:Karel Novotný']);
  });

  it('a lone unknown word at a sentence start is low confidence; one the lexicon knows is not', () => {
    expect(found('Brno is lovely in spring.')).toEqual(['thing:Brno?']);
    expect(found('Vienna is lovely in spring.')).toEqual(['place:Vienna']);
    expect(found('Costa Rica was warm.')).toEqual(['place:Costa Rica']);
  });

  it('drops sentence starters, adjectives, verbs and plurals at a sentence start, and labels', () => {
    expect(found('Excellent choice! Preheat the oven. Websites like that help. Dataset: ten rows.')).toEqual([]);
    expect(found('Honestly, Ostrava was awful.')).toEqual(['thing:Ostrava']);
  });

  it('stop lists: weekdays, months, holidays, languages, greetings, pronouns, kinship words alone', () => {
    expect(found('On Monday in January we spoke English and Czech at Christmas.')).toEqual([]);
    expect(found('Hello! Thanks, Mom. I think You know.')).toEqual([]);
  });

  it('headings, bold list labels and Title Case lines are not names; unknown acronyms are terms', () => {
    expect(found('Tips For Your Trip To Japan')).toEqual([]);
    expect(found('1. **Research Your Destination**: look up Costa Rica first.')).toEqual(['place:Costa Rica']);
    expect(found('I used XML and JSON for it.')).toEqual([]);
  });

  it('cuts honorifics and kinship titles, and reads kinds from the words around a name', () => {
    expect(found('Aunt Helga called from Salzburg.')).toEqual(['person:Helga', 'place:Salzburg']);
    expect(found('Dr. Novák told me to rest.')).toEqual(['person:Novák']);
    expect(found('She works at Allegro now.')).toEqual(['org:Allegro']);
  });
});

describe('Chinese names by jieba tags and cues', () => {
  it('an unknown word where a place or a person is expected', () => {
    expect(found('我和佩皮克一起去了布拉格。')).toEqual(['person:佩皮克', 'place:布拉格']);
    expect(found('我叫马雷克，住在布尔诺。')).toEqual(['person:马雷克', 'place:布尔诺']);
  });

  it('surnames, organisations and places, and nothing in plain sentences', () => {
    expect(found('张伟昨天从北京飞回成都了。')).toEqual(['person:张伟', 'place:北京', 'place:成都']);
    expect(found('今天好累，什么都不想做。')).toEqual([]);
  });
});

describe("the writer's own name", () => {
  it('English: "I\'m X", "my name is X", "call me X", not "I\'m sorry"', () => {
    expect(selfNames("Hi, I'm Marek.")).toEqual(['Marek']);
    expect(selfNames('Hello, my name is Ana Novák and I live in Brno.')).toEqual(['Ana Novák']);
    expect(selfNames('Call me Pepík, everyone does.')).toEqual(['Pepík']);
    expect(selfNames("I'm Sorry. I'm happy. I am Tired.")).toEqual([]);
  });

  it('Chinese: 我叫X, 我的名字是X', () => {
    expect(selfNames('我叫马雷克，住在布尔诺。')).toEqual(['马雷克']);
    expect(selfNames('我的名字是陈晓，很高兴认识你。')).toEqual(['陈晓']);
    expect(selfNames('我是学生。')).toEqual([]);
  });
});
