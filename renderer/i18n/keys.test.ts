import { describe, expect, it } from 'vitest';
import { ERROR_CODES, MEMORY_STATUSES, MEMORY_TYPES, SELF_BLOCK_KEYS, PROVIDER_KINDS, type MemoryChange, type MemorySource } from '../../shared/api.js';
import { historyKey } from '../lib/memories.js';
import en from './en.js';
import zhCN from './zh-CN.js';

function flatKeys(obj: unknown, prefix = ''): string[] {
  if (typeof obj !== 'object' || obj === null) return [prefix];
  return Object.entries(obj).flatMap(([k, v]) => flatKeys(v, prefix ? `${prefix}.${k}` : k));
}

function lookup(obj: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), obj);
}

function placeholders(s: string): string[] {
  return [...s.matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1]!).sort();
}

describe('i18n resources', () => {
  const enKeys = flatKeys(en).sort();
  const zhKeys = flatKeys(zhCN).sort();

  it('English and Simplified Chinese have exactly the same keys', () => {
    expect(zhKeys).toEqual(enKeys);
  });

  it('every text is a non-empty string', () => {
    for (const key of enKeys) {
      expect(typeof lookup(en, key), key).toBe('string');
      expect((lookup(en, key) as string).trim(), key).not.toBe('');
      expect((lookup(zhCN, key) as string).trim(), key).not.toBe('');
    }
  });

  it('both languages use the same interpolation variables', () => {
    for (const key of enKeys) {
      expect(placeholders(lookup(zhCN, key) as string), key).toEqual(placeholders(lookup(en, key) as string));
    }
  });

  it('every error code has words in both languages', () => {
    for (const code of ERROR_CODES) {
      for (const part of ['what', 'todo']) {
        expect(lookup(en, `errors.${code}.${part}`), code).toBeTypeOf('string');
        expect(lookup(zhCN, `errors.${code}.${part}`), code).toBeTypeOf('string');
      }
    }
  });

  it('every self block and provider kind has a name', () => {
    for (const key of SELF_BLOCK_KEYS) expect(lookup(en, `companion.blocks.${key}.name`)).toBeTypeOf('string');
    for (const kind of PROVIDER_KINDS) expect(lookup(en, `models.kinds.${kind}`)).toBeTypeOf('string');
  });

  it('every kind and state of memory, every source and every journal entry has words', () => {
    const actions: MemoryChange['action'][] = ['create', 'update', 'forget', 'restore', 'pin', 'unpin', 'reorder', 'supersede', 'expire', 'merge', 'undo'];
    const actors: MemoryChange['actor'][] = ['companion', 'person', 'light-sleep', 'deep-sleep', 'graph', 'system'];
    const sources: MemorySource[] = ['tool', 'light-sleep', 'deep-sleep', 'user'];
    for (const lang of [en, zhCN]) {
      for (const type of MEMORY_TYPES) {
        expect(lookup(lang, `memories.types.${type}`), type).toBeTypeOf('string');
        expect(lookup(lang, `memories.typeHelp.${type}`), type).toBeTypeOf('string');
      }
      for (const status of MEMORY_STATUSES) expect(lookup(lang, `memories.statuses.${status}`), status).toBeTypeOf('string');
      for (const source of sources) expect(lookup(lang, `memories.source.${source}`), source).toBeTypeOf('string');
      for (const action of actions) for (const actor of actors) expect(lookup(lang, historyKey({ action, actor })), `${action}/${actor}`).toBeTypeOf('string');
    }
  });
});
