import { describe, expect, it } from 'vitest';
import type { MemoryChange, RecallHit } from '../../shared/api.js';
import {
  DEFAULT_FILTERS,
  actorGroup,
  chipState,
  filtersAreDefault,
  historyKey,
  historyNewestFirst,
  hitPassesFilters,
  latestForget,
  latestUndoable,
  listInput,
  matchesFilters,
  memoryIdsOfHits,
  moveBy,
  moveTo,
  orderById,
  parseBounded,
  refusalText,
  replacedText,
  replacedType,
  sortPins,
  toggleStatus,
  toggleType,
  upsertInList,
} from './memories.js';
import { testMemory as memory } from './testing/memory.js';

function change(over: Partial<MemoryChange> & Pick<MemoryChange, 'id' | 'action'>): MemoryChange {
  return {
    memoryId: 1,
    actor: 'person',
    before: null,
    after: null,
    batchId: null,
    reason: null,
    undoneBy: null,
    createdAt: `2025-03-01T10:00:${String(over.id).padStart(2, '0')}.000Z`,
    ...over,
  };
}

describe('filters', () => {
  it('start at the active memories of every kind', () => {
    expect(filtersAreDefault(DEFAULT_FILTERS)).toBe(true);
    expect(listInput(DEFAULT_FILTERS, 0, 50)).toEqual({ statuses: ['active'], limit: 50 });
  });

  it('toggle kinds in a stable order and ask the host for exactly what is shown', () => {
    let f = toggleType(DEFAULT_FILTERS, 'preference');
    f = toggleType(f, 'world');
    expect(f.types).toEqual(['world', 'preference']);
    expect(filtersAreDefault(f)).toBe(false);
    f = { ...toggleStatus(f, 'expired'), pinnedOnly: true };
    expect(listInput(f, 50, 50)).toEqual({ types: ['world', 'preference'], statuses: ['active', 'expired'], pinned: true, limit: 50, offset: 50 });
    expect(toggleType(f, 'world').types).toEqual(['preference']);
  });

  it('never switch off the last status', () => {
    expect(toggleStatus(DEFAULT_FILTERS, 'active')).toBe(DEFAULT_FILTERS);
    expect(toggleStatus(toggleStatus(DEFAULT_FILTERS, 'superseded'), 'active').statuses).toEqual(['superseded']);
  });

  it('match memories by kind, state and pin', () => {
    const m = memory({ id: 1, type: 'opinion', pinned: true });
    expect(matchesFilters(m, DEFAULT_FILTERS)).toBe(true);
    expect(matchesFilters(m, { ...DEFAULT_FILTERS, types: ['world'] })).toBe(false);
    expect(matchesFilters({ ...m, status: 'expired' }, DEFAULT_FILTERS)).toBe(false);
    expect(matchesFilters({ ...m, pinned: false }, { ...DEFAULT_FILTERS, pinnedOnly: true })).toBe(false);
  });
});

describe('upsertInList', () => {
  const a = memory({ id: 1 });
  const b = memory({ id: 2 });

  it('replaces a card in place', () => {
    const next = upsertInList([a, b], { ...b, content: 'edited' }, DEFAULT_FILTERS);
    expect(next.map((m) => m.content)).toEqual(['memory 1', 'edited']);
  });

  it('drops a card that no longer matches (forgotten while only active ones show)', () => {
    expect(upsertInList([a, b], { ...a, status: 'expired' }, DEFAULT_FILTERS)).toEqual([b]);
  });

  it('adds a new memory at the top only when asked and when it matches', () => {
    const c = memory({ id: 3 });
    expect(upsertInList([a], c, DEFAULT_FILTERS)).toEqual([a]);
    expect(upsertInList([a], c, DEFAULT_FILTERS, true)).toEqual([c, a]);
    expect(upsertInList([a], { ...c, type: 'opinion' }, { ...DEFAULT_FILTERS, types: ['world'] }, true)).toEqual([a]);
  });

  it('returns the same list when nothing changed', () => {
    const list = [a, b];
    expect(upsertInList(list, a, DEFAULT_FILTERS)).toBe(list);
  });
});

describe('pins', () => {
  it('sort by their order, unordered ones last, unpinned ones out', () => {
    const list = [
      memory({ id: 1, pinned: true, pinOrder: 2 }),
      memory({ id: 2, pinned: true, pinOrder: null }),
      memory({ id: 3, pinned: true, pinOrder: 0 }),
      memory({ id: 4 }),
    ];
    expect(sortPins(list).map((m) => m.id)).toEqual([3, 1, 2]);
  });

  it('move up and down by one place, and not past either end', () => {
    const ids = [1, 2, 3];
    expect(moveBy(ids, 1, -1)).toEqual([2, 1, 3]);
    expect(moveBy(ids, 1, 1)).toEqual([1, 3, 2]);
    expect(moveBy(ids, 0, -1)).toBe(ids);
    expect(moveBy(ids, 2, 1)).toBe(ids);
  });

  it('move anywhere (a drag)', () => {
    expect(moveTo([1, 2, 3, 4], 0, 3)).toEqual([2, 3, 4, 1]);
    expect(moveTo([1, 2, 3, 4], 3, 1)).toEqual([1, 4, 2, 3]);
  });

  it('take a new order by id and renumber it', () => {
    const list = [memory({ id: 1, pinned: true, pinOrder: 0 }), memory({ id: 2, pinned: true, pinOrder: 1 }), memory({ id: 3, pinned: true, pinOrder: 2 })];
    const next = orderById(list, [3, 1, 2]);
    expect(next.map((m) => [m.id, m.pinOrder])).toEqual([
      [3, 0],
      [1, 1],
      [2, 2],
    ]);
  });
});

describe('chips', () => {
  it('are active until known otherwise, and missing when gone or no longer current', () => {
    expect(chipState(undefined)).toBe('active');
    expect(chipState({ status: 'loading', memory: null })).toBe('active');
    expect(chipState({ status: 'error', memory: null, error: new Error('offline') })).toBe('active');
    expect(chipState({ status: 'missing', memory: null })).toBe('missing');
    expect(chipState({ status: 'ok', memory: memory({ id: 1 }) })).toBe('active');
    expect(chipState({ status: 'ok', memory: memory({ id: 1, status: 'expired' }) })).toBe('missing');
    expect(chipState({ status: 'ok', memory: memory({ id: 1, status: 'superseded' }) })).toBe('missing');
  });
});

describe('search hits', () => {
  const hit = (memoryId: number, score: number, memoryType = 'world'): RecallHit => ({
    source: 'semantic',
    memoryType,
    text: `hit ${memoryId}`,
    time: '2025-03-01T10:00:00.000Z',
    score,
    link: { kind: 'memory', memoryId },
  });

  it('give each memory once, best first, and skip hits that are not memories', () => {
    const other: RecallHit = { ...hit(0, 0.99), source: 'session', link: { kind: 'message', conversationId: 'c', messageId: 'm' } };
    expect(memoryIdsOfHits([hit(1, 0.2), hit(2, 0.9), other, hit(1, 0.5)])).toEqual([2, 1]);
  });

  it('filter by what is known: the memory when fetched, else the hit', () => {
    const f = { ...DEFAULT_FILTERS, types: ['opinion' as const] };
    expect(hitPassesFilters(hit(1, 1, 'opinion'), undefined, f)).toBe(true);
    expect(hitPassesFilters(hit(1, 1, 'world'), undefined, f)).toBe(false);
    expect(hitPassesFilters(hit(1, 1, 'opinion'), memory({ id: 1, type: 'world' }), f)).toBe(false);
    expect(hitPassesFilters(hit(1, 1), undefined, { ...DEFAULT_FILTERS, pinnedOnly: true })).toBe(false);
  });
});

describe('the change journal in words', () => {
  it('groups who made a change', () => {
    expect(actorGroup('person')).toBe('person');
    expect(actorGroup('companion')).toBe('companion');
    expect(actorGroup('light-sleep')).toBe('sleep');
    expect(actorGroup('deep-sleep')).toBe('sleep');
    expect(actorGroup('graph')).toBe('system');
    expect(historyKey({ action: 'update', actor: 'person' })).toBe('memories.history.update.person');
    expect(historyKey({ action: 'create', actor: 'deep-sleep' })).toBe('memories.history.create.sleep');
  });

  it('shows what an edit replaced', () => {
    expect(replacedText(change({ id: 1, action: 'update', before: { content: 'old' }, after: { content: 'new' } }))).toBe('old');
    expect(replacedText(change({ id: 1, action: 'update', before: { content: 'same' }, after: { content: 'same', type: 'opinion' } }))).toBeNull();
    expect(replacedText(change({ id: 1, action: 'pin', before: { pinned: false }, after: { pinned: true } }))).toBeNull();
    expect(replacedType(change({ id: 1, action: 'update', before: { type: 'world' }, after: { type: 'opinion' } }))).toBe('world');
  });

  it('reads newest first and offers to undo only the newest change still standing', () => {
    const history = [
      change({ id: 1, action: 'create', actor: 'companion' }),
      change({ id: 2, action: 'update' }),
      change({ id: 3, action: 'forget', undoneBy: 4 }),
      change({ id: 4, action: 'undo' }),
    ];
    expect(historyNewestFirst(history).map((c) => c.id)).toEqual([4, 3, 2, 1]);
    expect(latestUndoable(history)?.id).toBe(2);
    expect(latestForget(history)).toBeNull();
    expect(latestForget([...history, change({ id: 5, action: 'forget' })])?.id).toBe(5);
  });
});

describe('refusals in words', () => {
  it('keeps only the reason from the host’s sentence', () => {
    expect(refusalText('Invalid input for memories.update — content: that looks like a password; I don’t keep secrets')).toBe(
      'That looks like a password; I don’t keep secrets',
    );
    expect(refusalText('Not saved: memories never hold credentials (passwords, API keys). (Recognised: password.)')).toBe(
      'Memories never hold credentials (passwords, API keys). (Recognised: password.)',
    );
    expect(refusalText('That looks like an API key.')).toBe('That looks like an API key.');
  });
});

describe('settings numbers', () => {
  it('accept what the host accepts and nothing else', () => {
    const limit = { min: 1, max: 20, integer: true };
    expect(parseBounded('6', limit)).toBe(6);
    expect(parseBounded(' 20 ', limit)).toBe(20);
    expect(parseBounded('0', limit)).toBeNull();
    expect(parseBounded('2.5', limit)).toBeNull();
    expect(parseBounded('', limit)).toBeNull();
    expect(parseBounded('1e1', limit)).toBeNull();
    const score = { min: 0, max: 1 };
    expect(parseBounded('0.35', score)).toBe(0.35);
    expect(parseBounded('0,35', score)).toBe(0.35);
    expect(parseBounded('.5', score)).toBe(0.5);
    expect(parseBounded('1.01', score)).toBeNull();
  });
});
