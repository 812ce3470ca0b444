import { describe, expect, it } from 'vitest';
import { checkName, findName, nameOf, withName } from '../../shared/companion-name.js';
import { DEFAULT_SELF_BLOCKS } from './self-layer.js';

describe("the companion's name in its identity block", () => {
  it('reads the name the default block says, and the ways people write one', () => {
    expect(nameOf(DEFAULT_SELF_BLOCKS.identity)).toBe('Anima');
    expect(nameOf('I’m Mira Chen, and I live here.')).toBe('Mira Chen');
    expect(nameOf('Hello. My name is mira. I like tea.')).toBe('mira');
    expect(nameOf('Call me Kit')).toBe('Kit');
    expect(nameOf('我叫小米。我住在这台电脑里。')).toBe('小米');
    expect(nameOf('我是Anima，一个住在这台电脑上的伙伴。')).toBe('Anima');
  });

  it('reads no name where none is said, and falls back to the default', () => {
    expect(findName('I am a companion who lives on this computer.')).toBeNull();
    expect(findName('我是一个伙伴，住在这里。')).toBeNull();
    expect(findName('Warm and curious. I am not a search engine.')).toBeNull();
    expect(nameOf('I listen.')).toBe('Anima');
  });

  it('renames in the block’s own sentence, and the new name reads back', () => {
    const renamed = withName(DEFAULT_SELF_BLOCKS.identity, 'Mira');
    expect(renamed.startsWith('I am Mira, a companion who lives on this computer')).toBe(true);
    expect(nameOf(renamed)).toBe('Mira');
    // A lower-case name would not read back after "I am": the sentence says it plainly.
    const lower = withName(DEFAULT_SELF_BLOCKS.identity, 'mira');
    expect(lower.startsWith('My name is mira, a companion')).toBe(true);
    expect(nameOf(lower)).toBe('mira');
    expect(nameOf(withName('我叫小米。我住在这里。', '阿福'))).toBe('阿福');
    // A block that says no name gets a sentence in front, in its language.
    expect(withName('I listen.', 'Kit')).toBe('My name is Kit. I listen.');
    expect(withName('我在这里陪你。', '小米')).toBe('我叫小米。我在这里陪你。');
    expect(nameOf(withName('I am warm.', 'Mira Chen'))).toBe('Mira Chen');
  });

  it('refuses an empty, long or punctuated name', () => {
    expect(() => checkName('  ')).toThrow(/empty/);
    expect(() => checkName('x'.repeat(41))).toThrow(/at most 40/);
    expect(() => checkName('Mira, the wise')).toThrow(/punctuation/);
    expect(checkName('  Mira   Chen ')).toBe('Mira Chen');
  });
});
