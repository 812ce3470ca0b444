// Reading a memory file back: the frontmatter the export writes (every value as JSON), and what a
// person is likely to type into it by hand (plain words, no quotes). Pure: text in, fields out.
import { createHash } from 'node:crypto';
import { isStorableDate } from '../../shared/text.js';
import type { VaultMemory } from '../archive/vault.js';

/** What a person can change in a memory file: the text, the type, the valid time, the pin. */
export interface EditableFields {
  type: string;
  content: string;
  validFrom: string | null;
  validTo: string | null;
  pinned: boolean;
}

export class BrokenFile extends Error {}

export interface ParsedFile {
  /** null: the file has no frontmatter at all (a plain note: its whole text is the content). */
  frontmatter: Map<string, unknown> | null;
  body: string;
}

export function sha256(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** A hand-typed scalar: JSON when it parses as JSON, else YAML's plain forms (null, ~, true, false, numbers, 'quoted'). */
function scalar(raw: string): unknown {
  const text = raw.trim();
  if (text === '' || text === '~' || text === 'null') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // not JSON: a plain YAML scalar
  }
  if (/^'.*'$/s.test(text)) return text.slice(1, -1).replace(/''/g, "'");
  if (text === 'true' || text === 'yes') return true;
  if (text === 'false' || text === 'no') return false;
  return text;
}

/** Splits a memory file into its frontmatter and body; throws BrokenFile saying what is wrong. */
export function parseMemoryFile(text: string): ParsedFile {
  const normalized = text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  if (!normalized.startsWith('---\n')) return { frontmatter: null, body: normalized.trim() };
  const end = normalized.indexOf('\n---', 3);
  if (end < 0 || (normalized[end + 4] !== undefined && normalized[end + 4] !== '\n')) {
    throw new BrokenFile('the frontmatter starts with --- but never ends with a --- line');
  }
  const fields = new Map<string, unknown>();
  for (const [i, line] of normalized.slice(4, end).split('\n').entries()) {
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
    const m = /^([A-Za-z_][\w-]*)\s*:(.*)$/.exec(line);
    if (!m) throw new BrokenFile(`line ${i + 2} of the frontmatter is not "name: value": ${JSON.stringify(line.slice(0, 60))}`);
    const key = m[1]!;
    if (fields.has(key)) throw new BrokenFile(`"${key}" appears twice in the frontmatter`);
    fields.set(key, scalar(m[2]!));
  }
  return { frontmatter: fields, body: normalized.slice(end + 4).trim() };
}

/** A date as the database gives it ('2025-03-01 00:00:00+00') or a person types it ('2025-03-01'), as ISO 8601; undefined when it is no real date. */
export function normalizeDate(value: unknown): string | null | undefined {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value !== 'string') return undefined;
  const iso = value
    .trim()
    .replace(' ', 'T')
    .replace(/([+-]\d\d)$/, '$1:00');
  if (!isStorableDate(iso)) return undefined;
  return new Date(Date.parse(iso)).toISOString();
}

/** The editable fields of a stored memory, normalised the way a file's are. */
export function rowFields(m: VaultMemory): EditableFields {
  return {
    type: m.type,
    content: m.content.trim(),
    validFrom: normalizeDate(m.valid_from) ?? null,
    validTo: normalizeDate(m.valid_to) ?? null,
    pinned: m.pinned,
  };
}

export function sameFields(a: EditableFields, b: EditableFields): boolean {
  return a.type === b.type && a.content === b.content && a.validFrom === b.validFrom && a.validTo === b.validTo && a.pinned === b.pinned;
}

export function differing(from: EditableFields, to: EditableFields): (keyof EditableFields)[] {
  return (['type', 'content', 'validFrom', 'validTo', 'pinned'] as const).filter((k) => from[k] !== to[k]);
}

/** A line of a memory's text for a report. */
export function line(text: string, max = 120): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
