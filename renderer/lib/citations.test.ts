import { describe, expect, it } from 'vitest';
import { citedIds, codeRanges, memoryIdOf, remarkCitations, splitCitations, type Segment } from './citations.js';

const chips = (segments: Segment[]) => segments.filter((s) => s.kind === 'citation').map((s) => (s.kind === 'citation' ? s.id : ''));
const joined = (segments: Segment[]) => segments.map((s) => (s.kind === 'text' ? s.text : `<${s.id}>`)).join('');

describe('splitCitations', () => {
  it('turns markers into citation segments between runs of text', () => {
    const s = splitCitations('Mara is in Lisbon [[anima:12]] and likes tea [[anima:3]].');
    expect(s).toEqual([
      { kind: 'text', text: 'Mara is in Lisbon ' },
      { kind: 'citation', id: '12', raw: '[[anima:12]]' },
      { kind: 'text', text: ' and likes tea ' },
      { kind: 'citation', id: '3', raw: '[[anima:3]]' },
      { kind: 'text', text: '.' },
    ]);
  });

  it('handles text with no markers, only markers, and adjacent markers', () => {
    expect(splitCitations('')).toEqual([]);
    expect(splitCitations('no memories here')).toEqual([{ kind: 'text', text: 'no memories here' }]);
    expect(chips(splitCitations('[[anima:1]][[anima:2]]'))).toEqual(['1', '2']);
    expect(joined(splitCitations('[[anima:1]][[anima:2]]'))).toBe('<1><2>');
  });

  it('leaves near-misses alone', () => {
    const text = '[anima:1] [[anima:]] [[Anima:2]] [[anima:3] [[anima:a b]]';
    expect(splitCitations(text)).toEqual([{ kind: 'text', text }]);
  });

  it('keeps markers inside fenced code blocks literal', () => {
    const text = 'Before [[anima:1]]\n\n```\nconst x = "[[anima:2]]";\n```\n\nAfter [[anima:3]]';
    expect(chips(splitCitations(text))).toEqual(['1', '3']);
    expect(joined(splitCitations(text))).toContain('const x = "[[anima:2]]";');
  });

  it('knows tilde fences, info strings, indented fences and longer closing fences', () => {
    expect(chips(splitCitations('~~~js\n[[anima:2]]\n~~~\n[[anima:5]]'))).toEqual(['5']);
    expect(chips(splitCitations('  ```python\n[[anima:2]]\n  `````\n[[anima:6]]'))).toEqual(['6']);
    // A shorter or different fence does not close the block.
    expect(chips(splitCitations('````\n```\n[[anima:2]]\n~~~\n[[anima:3]]\n````\n[[anima:7]]'))).toEqual(['7']);
  });

  it('treats an unclosed fence (a reply still streaming) as code to the end', () => {
    expect(chips(splitCitations('Here: [[anima:1]]\n```\n[[anima:2]]\nstill typing [[anima:3]]'))).toEqual(['1']);
  });

  it('keeps markers inside inline code literal, with any number of backticks', () => {
    expect(chips(splitCitations('use `[[anima:1]]` to cite [[anima:2]]'))).toEqual(['2']);
    expect(chips(splitCitations('``a ` [[anima:1]] b`` then [[anima:2]]'))).toEqual(['2']);
  });

  it('reads an unmatched backtick as plain text, and inline code never spans a blank line', () => {
    expect(chips(splitCitations('it`s [[anima:1]] here'))).toEqual(['1']);
    expect(chips(splitCitations('one ` tick\n\n[[anima:4]] and ` another'))).toEqual(['4']);
  });

  it('without codeAware finds every marker (for text the markdown parser already split from code)', () => {
    expect(chips(splitCitations('`[[anima:1]]`', { codeAware: false }))).toEqual(['1']);
  });

  it('handles Chinese text around markers', () => {
    expect(joined(splitCitations('你的姐姐在里斯本[[anima:8]]。'))).toBe('你的姐姐在里斯本<8>。');
  });
});

describe('codeRanges', () => {
  it('returns sorted, non-overlapping ranges that cover the code', () => {
    const text = 'a `b` c\n```\nd\n```\ne `f`';
    const ranges = codeRanges(text);
    expect(ranges.map(([s, e]) => text.slice(s, e))).toEqual(['`b`', '```\nd\n```\n', '`f`']);
  });
});

describe('memory ids', () => {
  it('reads only positive integers as memory ids', () => {
    expect(memoryIdOf('12')).toBe(12);
    expect(memoryIdOf('0')).toBeNull();
    expect(memoryIdOf('012')).toBeNull();
    expect(memoryIdOf('m-12')).toBeNull();
    expect(memoryIdOf('99999999999999999')).toBeNull();
  });

  it('lists each cited memory once, in order, ignoring code and non-ids', () => {
    expect(citedIds('[[anima:3]] x [[anima:1]] `[[anima:9]]` [[anima:3]] [[anima:m-1]]')).toEqual([3, 1]);
  });
});

interface Node {
  type: string;
  value?: string;
  url?: string;
  children?: Node[];
}

describe('remarkCitations', () => {
  const run = (tree: Node) => {
    (remarkCitations() as (t: Node) => void)(tree);
    return tree;
  };

  it('replaces markers in text nodes with anima: links, leaving code and inline code untouched', () => {
    const tree = run({
      type: 'root',
      children: [
        {
          type: 'paragraph',
          children: [
            { type: 'text', value: 'Mara [[anima:2]] and ' },
            { type: 'strong', children: [{ type: 'text', value: '[[anima:3]]' }] },
            { type: 'inlineCode', value: '[[anima:4]]' },
          ],
        },
        { type: 'code', value: '[[anima:5]]' },
      ],
    });
    const para = tree.children![0]!;
    expect(para.children!.map((n) => n.type)).toEqual(['text', 'link', 'text', 'strong', 'inlineCode']);
    expect(para.children![1]!.url).toBe('anima:2');
    expect(para.children![3]!.children![0]!.url).toBe('anima:3');
    expect(para.children![4]!.value).toBe('[[anima:4]]');
    expect(tree.children![1]).toEqual({ type: 'code', value: '[[anima:5]]' });
  });

  it('does not nest a chip inside a real link', () => {
    const link: Node = { type: 'link', url: 'https://x.y', children: [{ type: 'text', value: 'see [[anima:1]]' }] };
    const tree = run({ type: 'root', children: [{ type: 'paragraph', children: [link] }] });
    expect(tree.children![0]!.children![0]!.children).toEqual([{ type: 'text', value: 'see [[anima:1]]' }]);
  });

  it('encodes odd ids so they survive the URL', () => {
    const tree = run({ type: 'root', children: [{ type: 'paragraph', children: [{ type: 'text', value: '[[anima:a:b]]' }] }] });
    expect(tree.children![0]!.children![0]!.url).toBe('anima:a%3Ab');
  });
});
