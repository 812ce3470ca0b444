// The guards every memory write passes before it touches the database: a known type, content that
// fits and holds no secret, dates that parse and run forward, and an opinion or preference that says
// whose it is. A refusal is an ApiError naming the field and saying what to change.
import { ApiError, MAX_MEMORY_CHARS, MEMORY_TYPES, type MemoryActor, type MemorySource, type MemoryType } from '../../shared/api.js';
import { findSecret, secretRefusal } from './secret-filter.js';

export interface MemoryWrite {
  type: MemoryType;
  content: string;
  pinned?: boolean;
  validFrom?: string | null;
  validTo?: string | null;
  source: MemorySource;
  actor: MemoryActor;
  sourceMessageIds?: string[];
  entityNames?: string[];
  reason?: string;
  /** Changes sharing a batch are undone together (a merge, a night's consolidation). */
  batchId?: string;
  /** Always a new memory, never an update of an active near-duplicate (deep sleep's profiles: one per entity, however alike). */
  keepApart?: boolean;
}

/** A write that passed every guard, with its defaults filled in (and its search text, when segmented ahead). */
export type CheckedWrite = MemoryWrite & Required<Pick<MemoryWrite, 'pinned' | 'sourceMessageIds' | 'entityNames'>> & { segmented?: string | null };

export function invalid(field: string, message: string): never {
  throw new ApiError('invalid_input', message, field);
}

export function checkType(type: unknown): MemoryType {
  if (type === undefined || type === null || type === '') {
    invalid('type', `A memory needs a type: one of ${MEMORY_TYPES.join(', ')}.`);
  }
  if (!MEMORY_TYPES.includes(type as MemoryType)) {
    invalid('type', `Unknown memory type "${String(type)}": use one of ${MEMORY_TYPES.join(', ')}.`);
  }
  return type as MemoryType;
}

export function checkContent(content: unknown): string {
  if (typeof content !== 'string' || content.trim() === '') invalid('content', 'A memory needs content: the fact, in a sentence or two.');
  const text = content.trim();
  if (text.length > MAX_MEMORY_CHARS) {
    invalid(
      'content',
      `The content is ${text.length} characters; a memory holds at most ${MAX_MEMORY_CHARS}. Keep the one thing worth remembering, in a sentence or two.`,
    );
  }
  const secret = findSecret(text);
  if (secret) invalid('content', secretRefusal(secret));
  return text;
}

export function checkTime(field: 'validFrom' | 'validTo', value: string | null | undefined): string | null | undefined {
  if (value === undefined || value === null) return value;
  const t = Date.parse(value);
  if (Number.isNaN(t)) invalid(field, `${field} must be a date (ISO 8601, e.g. 2025-03-01), not "${value}".`);
  return new Date(t).toISOString();
}

export function checkValidity(from: string | null | undefined, to: string | null | undefined): void {
  if (from && to && Date.parse(to) < Date.parse(from)) invalid('validTo', 'validTo is before validFrom.');
}

// Whose opinion or preference is it? A light check, not grammar: the text must contain
//   - a first-person word (I, I'm, my, me, mine, myself, we, our) — the companion's own;
//   - "the person", "user" — the one the companion talks with;
//   - a name: a possessive ("Mara's"), "for/according to Mara", a capitalised word right before a
//     verb of liking or judging ("Mara prefers", "Bob thinks"), or reported speech ("Mara said …");
//   - in Chinese: 我/你/他/她/用户/对方, or any subject before 喜欢/讨厌/觉得/认为/… ("妹妹喜欢绿茶").
// "Prefers green tea" and "TypeScript fits this project better" fail: they say what, not whose.
const OWNER_PATTERNS = [
  /\b(?:I|I'm|I've|I'd|I'll)\b/,
  /\b(?:my|me|mine|myself|we|our|ours)\b/i,
  /\b(?:the person|users?)\b/i,
  /\p{Lu}[\p{L}\p{M}.-]*['’]s\b/u,
  /\b(?:[Ff]or|[Aa]ccording to)\s+\p{Lu}/u,
  /\p{Lu}[\p{L}\p{M}.-]*\s+(?:(?:really|strongly|still|also|usually|always|never|does not|doesn't)\s+)?(?:prefers?|likes?|loves?|hates?|dislikes?|thinks?|believes?|feels?|finds?|wants?|enjoys?|favou?rs?|avoids?|values?|trusts?|distrusts?|wishes|considers?|would rather)\b/u,
  // Reported speech names its owner too: "Caroline said she loves hiking", "Bob told me he prefers tea".
  /\p{Lu}[\p{L}\p{M}.-]*\s+(?:said|says|told me|mentioned|admitted|explained)\b/u,
  /[我你他她]|用户|对方/,
  /[\p{Script=Han}A-Za-z]\s*(?:不|很|最|比较|更)?(?:喜欢|讨厌|偏好|偏爱|觉得|认为|爱|想要|希望|受不了)/u,
];

export function namesWhose(content: string): boolean {
  return OWNER_PATTERNS.some((re) => re.test(content));
}

export function checkOwner(type: MemoryType, content: string): void {
  if ((type === 'opinion' || type === 'preference') && !namesWhose(content)) {
    invalid(
      'content',
      `An ${type} must say whose it is, in the first person for the companion's own ("I prefer short answers") or naming the person ("Mara prefers tea", "The person thinks …").`,
    );
  }
}

/** Checks a write and fills in its defaults; throws ApiError (touching nothing) when a guard refuses it. */
export function checkWrite(w: MemoryWrite): CheckedWrite {
  const type = checkType(w.type);
  const content = checkContent(w.content);
  checkOwner(type, content);
  // undefined stays undefined: saving a near-duplicate without dates keeps the dates it had.
  const validFrom = checkTime('validFrom', w.validFrom);
  const validTo = checkTime('validTo', w.validTo);
  checkValidity(validFrom, validTo);
  const entityNames = [...new Set((w.entityNames ?? []).map((n) => n.trim()).filter(Boolean))];
  const secret = findSecret(entityNames.join('\n'));
  if (secret) invalid('entityNames', secretRefusal(secret));
  return {
    ...w,
    type,
    content,
    pinned: w.pinned ?? false,
    validFrom,
    validTo,
    sourceMessageIds: [...new Set(w.sourceMessageIds ?? [])],
    entityNames,
  };
}
