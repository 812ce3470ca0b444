// Text as it enters the app: from an API payload, a model's answer or an imported file. Postgres
// text cannot hold a NUL byte, and JSON (the change journal) cannot hold a lone UTF-16 surrogate;
// either would fail a write and lose what came with it. Both are replaced, visibly, by U+FFFD once
// where text enters, so everything after can trust its strings.

export const REPLACEMENT_CHAR = '\uFFFD';

// A NUL; a high surrogate not followed by a low one; a low surrogate not preceded by a high one.
// eslint-disable-next-line no-control-regex -- a NUL is exactly what this looks for
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** The text with NULs and lone surrogates replaced by U+FFFD (the same string when there are none). */
export function storableText(text: string): string {
  UNSTORABLE.lastIndex = 0;
  return UNSTORABLE.test(text) ? text.replace(UNSTORABLE, REPLACEMENT_CHAR) : text;
}

/** Deeper than this, no input of the API's is meant to go; a payload that does is refused, not walked. */
export const MAX_NESTING = 64;

export class TooDeeplyNested extends Error {
  constructor() {
    super(`The input nests deeper than ${MAX_NESTING} levels.`);
  }
}

/** storableText applied to every string (and object key) in a JSON-like value; throws TooDeeplyNested past MAX_NESTING. */
export function storableValue<T>(value: T, depth = 0): T {
  if (typeof value === 'string') return storableText(value) as T;
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_NESTING) throw new TooDeeplyNested();
  if (Array.isArray(value)) return value.map((v: unknown) => storableValue(v, depth + 1)) as T;
  if (Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[storableText(k)] = storableValue(v, depth + 1);
    return out as T;
  }
  return value;
}

// The dates the database and JavaScript both hold exactly: years 1 to 9999, real calendar days.
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** A calendar day, YYYY-MM-DD, that exists in years 1–9999 ("2026-02-30" does not). */
export function isCalendarDay(value: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(value) && isStorableDate(value);
}

/** A date or date-time in ISO 8601 form that names a real moment in years 1–9999 ("2024-02-30", "1" and year 10000 do not). */
export function isStorableDate(value: string): boolean {
  const m = ISO_DATE.exec(value.trim());
  if (!m) return false;
  const [year, month, day, hour = 0, minute = 0, second = 0] = m.slice(1, 7).map((p) => (p === undefined ? undefined : Number(p))) as number[];
  if (year! < 1 || month! < 1 || month! > 12 || day! < 1 || hour > 23 || minute > 59 || second > 59) return false;
  const date = new Date(Date.UTC(2000, month! - 1, day!));
  date.setUTCFullYear(year!);
  return date.getUTCDate() === day && date.getUTCMonth() === month! - 1 && !Number.isNaN(Date.parse(value));
}
