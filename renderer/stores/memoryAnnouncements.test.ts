import { describe, expect, it } from 'vitest';
import type { MemoryChange } from '../../shared/api.js';
import { shouldAnnounce } from './memoryAnnouncements.js';

const change = (over: Partial<MemoryChange>): MemoryChange => ({
  id: 1,
  memoryId: 1,
  action: 'create',
  actor: 'companion',
  before: null,
  after: { content: 'x' },
  batchId: null,
  reason: null,
  undoneBy: null,
  createdAt: '',
  ...over,
});

describe('announcing memory changes', () => {
  it('announces what the companion saved, changed or let go of during a chat', () => {
    expect(shouldAnnounce(change({}))).toBe(true);
    expect(shouldAnnounce(change({ action: 'update' }))).toBe(true);
    expect(shouldAnnounce(change({ action: 'forget' }))).toBe(true);
  });

  it('stays quiet about the person’s own changes, the night’s work and bookkeeping', () => {
    expect(shouldAnnounce(change({ actor: 'person' }))).toBe(false);
    expect(shouldAnnounce(change({ actor: 'light-sleep' }))).toBe(false);
    expect(shouldAnnounce(change({ action: 'reorder' }))).toBe(false);
    expect(shouldAnnounce(change({ undoneBy: 3 }))).toBe(false);
  });
});
