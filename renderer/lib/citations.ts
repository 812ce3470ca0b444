// Citations: the companion writes [[anima:ID]] where it drew on a memory. On screen each becomes a
// small memory chip — except inside code, where the text is shown exactly as written.

export type Segment = { kind: 'text'; text: string } | { kind: 'citation'; id: string; raw: string };

/** The marker as the host reads it (ids are memory numbers; anything else shows as a missing memory). */
export const CITATION_PATTERN = /\[\[anima:([A-Za-z0-9_.:-]{1,64})\]\]/g;

/** A memory id from a marker, or null when the marker names something that cannot be a memory. */
export function memoryIdOf(raw: string): number | null {
  if (!/^[1-9]\d{0,15}$/.test(raw)) return null;
  const n = Number(raw);
  return Number.isSafeInteger(n) ? n : null;
}

type Range = [start: number, end: number];

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const FENCE_CLOSE = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;

/**
 * Where the code is in a piece of markdown-ish text: fenced blocks (``` or ~~~, an unclosed one runs
 * to the end — a reply still streaming in is mid-block) and inline code spans (`…`, ``…``).
 * Returned as [start, end) offsets, in order, not overlapping.
 */
export function codeRanges(text: string): Range[] {
  const ranges: Range[] = [];
  const prose: Range[] = [];
  let offset = 0;
  let fence: { char: string; len: number; start: number } | null = null;
  let proseStart = 0;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const lineEnd = offset + line.length + (i < lines.length - 1 ? 1 : 0);
    if (fence) {
      const close = FENCE_CLOSE.exec(line);
      if (close && close[1]![0] === fence.char && close[1]!.length >= fence.len) {
        ranges.push([fence.start, lineEnd]);
        fence = null;
        proseStart = lineEnd;
      }
    } else {
      const open = FENCE_OPEN.exec(line);
      // A backtick fence's info string cannot itself hold backticks (that would be inline code).
      if (open && !(open[1]![0] === '`' && open[2]!.includes('`'))) {
        if (offset > proseStart) prose.push([proseStart, offset]);
        fence = { char: open[1]![0]!, len: open[1]!.length, start: offset };
      }
    }
    offset = lineEnd;
  }
  if (fence) ranges.push([fence.start, text.length]);
  else if (text.length > proseStart) prose.push([proseStart, text.length]);

  for (const [from, to] of prose) ranges.push(...inlineCodeRanges(text, from, to));
  return ranges.sort((a, b) => a[0] - b[0]);
}

/** Inline code spans: a run of N backticks up to the next run of exactly N, within one paragraph. */
function inlineCodeRanges(text: string, from: number, to: number): Range[] {
  const out: Range[] = [];
  const runs: { at: number; len: number }[] = [];
  const re = /`+/g;
  re.lastIndex = from;
  for (let m = re.exec(text); m && m.index < to; m = re.exec(text)) runs.push({ at: m.index, len: m[0].length });
  let i = 0;
  while (i < runs.length) {
    const open = runs[i]!;
    let closeAt = -1;
    for (let j = i + 1; j < runs.length; j++) {
      const between = text.slice(open.at + open.len, runs[j]!.at);
      if (/\n[ \t]*\n/.test(between)) break; // a blank line ends the paragraph
      if (runs[j]!.len === open.len) {
        closeAt = j;
        break;
      }
    }
    if (closeAt < 0) {
      // No partner: the backticks are just text.
      i++;
      continue;
    }
    const close = runs[closeAt]!;
    out.push([open.at, close.at + close.len]);
    i = closeAt + 1;
  }
  return out;
}

function inside(ranges: Range[], at: number): boolean {
  for (const [s, e] of ranges) {
    if (at < s) return false;
    if (at < e) return true;
  }
  return false;
}

/**
 * Split text into plain runs and citation markers. With codeAware (plain text that may hold
 * markdown code, like a person's own message) markers inside code stay literal text.
 */
export function splitCitations(text: string, options: { codeAware?: boolean } = {}): Segment[] {
  const codeAware = options.codeAware ?? true;
  if (!text.includes('[[anima:')) return text ? [{ kind: 'text', text }] : [];
  const code = codeAware ? codeRanges(text) : [];
  const out: Segment[] = [];
  let last = 0;
  const pushText = (s: string) => {
    if (!s) return;
    const prev = out[out.length - 1];
    if (prev && prev.kind === 'text') prev.text += s;
    else out.push({ kind: 'text', text: s });
  };
  for (const m of text.matchAll(CITATION_PATTERN)) {
    const at = m.index;
    if (code.length && inside(code, at)) continue;
    pushText(text.slice(last, at));
    out.push({ kind: 'citation', id: m[1]!, raw: m[0] });
    last = at + m[0].length;
  }
  pushText(text.slice(last));
  return out;
}

/** The distinct memory ids cited in a text (outside code), in order of first mention. */
export function citedIds(text: string): number[] {
  const seen = new Set<number>();
  for (const s of splitCitations(text)) {
    if (s.kind !== 'citation') continue;
    const id = memoryIdOf(s.id);
    if (id !== null) seen.add(id);
  }
  return [...seen];
}

// ---- markdown: markers become links with their own scheme, drawn as chips by the renderer ----

interface MdNode {
  type: string;
  value?: string;
  url?: string;
  children?: MdNode[];
}

export const CITATION_SCHEME = 'anima:';

/**
 * A remark plugin. It works on the parsed tree, so code blocks and inline code (which are `code` and
 * `inlineCode` nodes, not `text`) are never touched: a marker there is shown as written.
 */
export function remarkCitations() {
  const walk = (node: MdNode) => {
    if (!node.children) return;
    const next: MdNode[] = [];
    let changed = false;
    for (const child of node.children) {
      if (child.type === 'text' && child.value && child.value.includes('[[anima:')) {
        const parts = splitCitations(child.value, { codeAware: false });
        if (parts.some((p) => p.kind === 'citation')) {
          changed = true;
          for (const p of parts) {
            if (p.kind === 'text') next.push({ type: 'text', value: p.text });
            else next.push({ type: 'link', url: `${CITATION_SCHEME}${encodeURIComponent(p.id)}`, children: [{ type: 'text', value: '†' }] });
          }
          continue;
        }
      }
      // A marker inside a link's own text stays text: a chip is a control, and controls do not nest.
      if (child.type !== 'link' && child.type !== 'linkReference') walk(child);
      next.push(child);
    }
    if (changed) node.children = next;
  };
  return (tree: MdNode) => walk(tree);
}
