import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError, type DiaryBlock, type DiaryDay, type RecallHit } from '../../shared/api.js';
import { setClient } from '../api/index.js';
import { scriptedClient, type ScriptedClient } from '../api/scripted-client.js';
import { useApp } from './app.js';
import { appendOlder, DAYS_PAGE, hitDay, resetDiaryStore, useDiary, visibleDay, withoutBlock } from './diary.js';

function block(id: number, day: string, kind: DiaryBlock['kind'], over: Partial<DiaryBlock> = {}): DiaryBlock {
  return { id, day, kind, conversationId: null, title: null, body: `${kind} ${id}`, mood: null, createdAt: `${day}T03:00:00.000Z`, hiddenAt: null, ...over };
}

function day(d: string, ids: { anchors?: number[]; imprints?: number[]; narratives?: number[] } = {}): DiaryDay {
  return {
    day: d,
    mood: null,
    anchors: (ids.anchors ?? []).map((id) => block(id, d, 'anchor')),
    imprints: (ids.imprints ?? []).map((id) => block(id, d, 'imprint')),
    narratives: (ids.narratives ?? []).map((id) => block(id, d, 'narrative')),
  };
}

/** Sleep days counting back from 2025-03-31. */
function daysBack(from: number, count: number): DiaryDay[] {
  return Array.from({ length: count }, (_, i) => {
    const date = new Date(Date.UTC(2025, 2, 31 - from - i));
    return day(date.toISOString().slice(0, 10), { narratives: [1000 + from + i] });
  });
}

let handlers: ScriptedClient['handlers'];
let calls: ScriptedClient['calls'];

beforeEach(() => {
  useApp.setState({ view: 'diary' });
  const scripted = scriptedClient();
  ({ handlers, calls } = scripted);
  resetDiaryStore();
  setClient(scripted.client);
});
afterEach(() => setClient(null));

describe('pure helpers', () => {
  it('drops hidden blocks, and leaves a day alone when nothing is hidden', () => {
    const d = day('2025-03-01', { anchors: [1, 2] });
    expect(visibleDay(d)).toBe(d);
    d.anchors[1] = { ...d.anchors[1]!, hiddenAt: '2025-03-02T00:00:00Z' };
    expect(visibleDay(d).anchors.map((b) => b.id)).toEqual([1]);
  });

  it('removes one block wherever it is, keeping the other days as they were', () => {
    const days = [day('2025-03-02', { anchors: [1], imprints: [2] }), day('2025-03-01', { narratives: [3] })];
    const next = withoutBlock(days, 2);
    expect(next[0]!.imprints).toEqual([]);
    expect(next[0]!.anchors).toBe(days[0]!.anchors);
    expect(next[1]).toBe(days[1]);
    expect(withoutBlock(days, 99)).toBe(days);
  });

  it('appends older days once each, newest first', () => {
    const shown = [day('2025-03-05'), day('2025-03-04')];
    const merged = appendOlder(shown, [day('2025-03-04'), day('2025-03-02'), day('2025-03-03')]);
    expect(merged.map((d) => d.day)).toEqual(['2025-03-05', '2025-03-04', '2025-03-03', '2025-03-02']);
  });

  it('knows where a diary hit points, and that other hits point nowhere here', () => {
    const base = { source: 'limbic' as const, memoryType: 'limbic', text: 'x', time: '2025-03-01T00:00:00Z', score: 1 };
    expect(hitDay({ ...base, link: { kind: 'diary', day: '2025-03-01', blockId: 7 } } satisfies RecallHit)).toEqual({ day: '2025-03-01', blockId: 7 });
    expect(hitDay({ ...base, link: { kind: 'memory', memoryId: 3 } })).toBeNull();
  });
});

describe('the diary store', () => {
  it('loads a page of days and pages back with `before`', async () => {
    handlers['diary.days'] = (input) => (input.before ? daysBack(DAYS_PAGE, 3) : daysBack(0, DAYS_PAGE));
    await useDiary.getState().refreshDays();
    expect(useDiary.getState().days.items).toHaveLength(DAYS_PAGE);
    expect(useDiary.getState().days.hasMore).toBe(true);
    await useDiary.getState().loadOlder();
    const last = calls.at(-1)!;
    expect(last.input).toEqual({ limit: DAYS_PAGE, before: daysBack(0, DAYS_PAGE).at(-1)!.day });
    expect(useDiary.getState().days.items).toHaveLength(DAYS_PAGE + 3);
    expect(useDiary.getState().days.hasMore).toBe(false);
  });

  it('hides a block at once, and puts the page back when the host refuses', async () => {
    let days = [day('2025-03-02', { anchors: [1, 2] })];
    handlers['diary.days'] = () => days;
    await useDiary.getState().refreshDays();
    handlers['diary.hide'] = (input) => {
      days = [day('2025-03-02', { anchors: [1] })];
      return block(input.id, '2025-03-02', 'anchor', { hiddenAt: input.hidden ? '2025-03-03T00:00:00Z' : null });
    };
    const hiding = useDiary.getState().hide(days[0]!.anchors[1]!);
    expect(useDiary.getState().days.items[0]!.anchors.map((b) => b.id)).toEqual([1]);
    await hiding;
    expect(calls.find((c) => c.method === 'diary.hide')!.input).toEqual({ id: 2, hidden: true });

    handlers['diary.hide'] = () => {
      throw new ApiError('internal', 'no');
    };
    days = [day('2025-03-02', { anchors: [1] })];
    await expect(useDiary.getState().hide(days[0]!.anchors[0]!)).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 0));
    expect(useDiary.getState().days.items[0]!.anchors.map((b) => b.id)).toEqual([1]);
  });

  it('brings a hidden block back with hidden: false and a fresh page', async () => {
    const b = block(5, '2025-03-02', 'imprint');
    handlers['diary.hide'] = (input) => ({ ...b, hiddenAt: input.hidden ? 'x' : null });
    handlers['diary.days'] = () => [day('2025-03-02', { imprints: [5] })];
    await useDiary.getState().unhide(b);
    expect(calls.map((c) => c.method)).toEqual(['diary.hide', 'diary.days']);
    expect(calls[0]!.input).toEqual({ id: 5, hidden: false });
    expect(useDiary.getState().days.items[0]!.imprints[0]!.id).toBe(5);
  });

  it('searches the limbic and autobiographical sources only', async () => {
    handlers['recall.search'] = () => [];
    useDiary.getState().setQuery('the lake');
    await useDiary.getState().runSearch();
    expect(calls.at(-1)).toEqual({ method: 'recall.search', input: { query: 'the lake', sources: ['limbic', 'autobiographical'], limit: 30 } });
    useDiary.getState().setQuery('');
    expect(useDiary.getState().search.hits).toEqual([]);
  });

  it('pages back until the day asked for is loaded, then asks for it to be shown', async () => {
    handlers['diary.days'] = (input) => {
      if (!input.before) return daysBack(0, DAYS_PAGE);
      const start = daysBack(0, 100).findIndex((d) => d.day < input.before!);
      return daysBack(start, DAYS_PAGE);
    };
    const target = daysBack(30, 1)[0]!.day;
    await useDiary.getState().goToDay(target, 42);
    expect(useDiary.getState().days.items.some((d) => d.day === target)).toBe(true);
    expect(useDiary.getState().focus).toMatchObject({ day: target, blockId: 42 });
  });

  it('keeps the open dream only while it still exists, and leaves hidden dreams out', async () => {
    const dreams = [block(9, '2025-03-02', 'dream', { title: 'The lake' }), block(8, '2025-03-01', 'dream', { hiddenAt: 'x' })];
    handlers['dreams.list'] = () => dreams;
    useDiary.getState().openDream(9);
    await useDiary.getState().refreshDreams();
    expect(useDiary.getState().dreams.items.map((d) => d.id)).toEqual([9]);
    expect(useDiary.getState().openDreamId).toBe(9);
    handlers['dreams.list'] = () => [];
    await useDiary.getState().refreshDreams();
    expect(useDiary.getState().openDreamId).toBeNull();
  });
});
