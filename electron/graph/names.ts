// Entity names: the key names are compared by, and the check every name the person types (or a
// model gives) must pass before it becomes an entity, an alias or a rename.
import { ApiError } from '../../shared/api.js';
import { findSecret } from '../memory/secret-filter.js';
import { MAX_NAME_CHARS } from './mentions.js';

/**
 * The comparison key: NFKC (full-width "Ａｎａ" is "Ana"), lower case, punctuation and symbols
 * dropped ("J.K. Rowling" and "JK Rowling" are one key, so are "O'Brien" and "OBrien"), spaces
 * collapsed. Empty when nothing but punctuation, symbols or emoji is left.
 */
export function nameKey(name: string): string {
  return name
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\p{P}\p{S}\p{C}]+/gu, '')
    .replace(/\s+/g, ' ')
    .trim();
}

// Letters of scripts that look alike: one word mixing them ("Аnа" with Cyrillic а) is a spoof or an
// accident, never a name, and would make two entities that look the same.
const LOOKALIKE_SCRIPTS: [string, RegExp][] = [
  ['Latin', /\p{Script=Latin}/u],
  ['Cyrillic', /\p{Script=Cyrillic}/u],
  ['Greek', /\p{Script=Greek}/u],
];

function invalid(field: string, message: string): never {
  throw new ApiError('invalid_input', message, field);
}

/**
 * A name as it will be stored, or ApiError('invalid_input') saying what is wrong with it: empty,
 * over 120 characters, no letter at all (emoji, punctuation), control or invisible formatting
 * characters, one word in two look-alike scripts, or a credential (secret-filter.ts). Han beside
 * Latin in separate words is fine ("Ana 张").
 */
export function checkName(raw: unknown, field = 'name'): { name: string; key: string } {
  if (typeof raw !== 'string') invalid(field, 'A name must be text.');
  const name = raw.normalize('NFKC').replace(/\s+/g, ' ').trim();
  if (name === '') invalid(field, 'A name cannot be empty.');
  // Names are shown on the map, in prompts and in exports: a credential never becomes one (and the
  // refusal does not repeat it). Read as given, before spaces are collapsed: a key wrapped across
  // lines is still one key.
  // (The scan is the costly part: the collapsed form only when it differs.)
  const secret = findSecret(raw) ?? (name === raw ? null : findSecret(name));
  if (secret) invalid(field, `This is a credential, not a name (recognised: ${secret.kind}); names never hold passwords, keys or tokens.`);
  if (name.length > MAX_NAME_CHARS) invalid(field, `A name holds at most ${MAX_NAME_CHARS} characters; this one has ${name.length}.`);
  // Bidi overrides, zero-width characters and control characters make a name that displays as
  // something it is not.
  if (/[\p{Cc}\p{Cf}]/u.test(name)) invalid(field, 'A name cannot contain control or invisible formatting characters.');
  if (!/\p{L}/u.test(name)) invalid(field, `“${name}” has no letters; a name needs at least one (emoji and punctuation alone are not names).`);
  for (const word of name.split(/[\s\-‐–—.'’]+/)) {
    const scripts = LOOKALIKE_SCRIPTS.filter(([, re]) => re.test(word)).map(([s]) => s);
    if (scripts.length > 1) invalid(field, `“${word}” mixes ${scripts.join(' and ')} letters that look alike; write it in one script.`);
  }
  const key = nameKey(name);
  if (key === '') invalid(field, `“${name}” has no letters once punctuation is removed.`);
  return { name, key };
}

/** Names cleanName remembers (the most recent; the oldest go first). */
const CLEAN_CACHE_SIZE = 5_000;
const cleanCache = new Map<string, { name: string; key: string } | null>();

/**
 * Like checkName, but null instead of an error (for names found automatically). The same names
 * come back in message after message, and the credential scan is most of checkName's cost: the
 * answer for a recent string is remembered (checkName depends on the string alone).
 */
export function cleanName(raw: string): { name: string; key: string } | null {
  const known = cleanCache.get(raw);
  if (known !== undefined) return known && { ...known };
  let clean: { name: string; key: string } | null;
  try {
    clean = checkName(raw);
  } catch {
    clean = null;
  }
  cleanCache.set(raw, clean && { ...clean });
  if (cleanCache.size > CLEAN_CACHE_SIZE) cleanCache.delete(cleanCache.keys().next().value!);
  return clean;
}
