// The checks every graph input passes before anything is read or written.
import { ApiError, ENTITY_KINDS, type EntityKind } from '../../shared/api.js';

export function invalid(field: string, message: string): never {
  throw new ApiError('invalid_input', message, field);
}

export function checkId(id: unknown, field: string): number {
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) invalid(field, `${field} must be a positive whole number.`);
  return id;
}

/** An optional date (ISO 8601) as an ISO string, null when absent, ApiError when unreadable. */
export function checkTime(v: string | null | undefined, field: string): string | null {
  if (v === undefined || v === null) return null;
  const t = Date.parse(v);
  if (Number.isNaN(t)) invalid(field, `${field} must be a date (ISO 8601), not "${v}".`);
  return new Date(t).toISOString();
}

export function checkKind(kind: EntityKind, field: string): void {
  if (!ENTITY_KINDS.includes(kind)) invalid(field, `Unknown entity kind "${String(kind)}": use one of ${ENTITY_KINDS.join(', ')}.`);
}

/** The kinds a view keeps, null for all of them. */
export function checkKinds(kinds: EntityKind[] | undefined): string[] | null {
  if (kinds === undefined) return null;
  const bad = kinds.find((k) => !ENTITY_KINDS.includes(k));
  if (bad !== undefined) invalid('kinds', `Unknown entity kind "${String(bad)}": use ${ENTITY_KINDS.join(', ')}.`);
  return kinds.length ? [...kinds] : null;
}

export function clamp(n: number, lo: number, hi: number): number {
  return Math.min(Math.max(Number.isFinite(n) ? n : lo, lo), hi);
}

export const RELATION_WORD = 'A relation is a short snake_case word, like works_at or sister_of.';
export const isRelationWord = (relation: string) => /^[a-z][a-z0-9_]{0,79}$/.test(relation);
