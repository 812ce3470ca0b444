// The Diary and Dreams views' data: diary days newest first (paged back with `before`), the mood
// series for the chart, the diary search (the companion's own recall over its limbic and
// autobiographical memory) and the dreams. Hidden blocks leave at once and come back with undo.
import { create } from 'zustand';
import type { DiaryBlock, DiaryDay, MoodPoint, RecallHit, RecallSource } from '../../shared/api.js';
import { api } from '../api/index.js';
import type { MoodRange } from '../lib/mood.js';
import { useApp } from './app.js';
import { idle, type Loadable } from './loadable.js';
import { createSearchSlice, emptySearch, type SearchSlice } from './searchSlice.js';

export const DAYS_PAGE = 14;
const MAX_DAYS = 90;
/** The chart's longest window; the 7-day view is its tail. */
export const MOOD_DAYS = 30;
export const DIARY_SEARCH_SOURCES: RecallSource[] = ['limbic', 'autobiographical'];
export const DIARY_SEARCH_LIMIT = 30;
const DREAMS_LIMIT = 366;
/** How far "go to this day" pages back before giving up. */
const MAX_PAGES_TO_FIND = 12;

export interface DiaryFocus {
  day: string;
  blockId: number | null;
  /** Changes on every request, so asking for the same day twice scrolls again. */
  seq: number;
}

export interface DiaryState extends SearchSlice<RecallHit> {
  days: Loadable & { items: DiaryDay[]; hasMore: boolean; loadingOlder: boolean; olderError: unknown };
  mood: Loadable & { points: MoodPoint[] };
  range: MoodRange;
  focus: DiaryFocus | null;
  dreams: Loadable & { items: DiaryBlock[] };
  openDreamId: number | null;

  refreshDays(): Promise<void>;
  loadOlder(): Promise<void>;
  refreshMood(): Promise<void>;
  setRange(range: MoodRange): void;
  /** Show this day (and block): pages back until it is loaded, then asks the view to scroll to it. */
  goToDay(day: string, blockId?: number | null): Promise<void>;
  clearFocus(): void;
  /** Hide a block: it leaves the page at once; the host keeps it as a tombstone. */
  hide(block: DiaryBlock): Promise<void>;
  unhide(block: DiaryBlock): Promise<void>;

  refreshDreams(): Promise<void>;
  openDream(id: number | null): void;

  /** From diary.changed and sleep.finished: whatever is on screen is fetched again (debounced). */
  noteChanged(): void;
  refreshShown(): void;
}

let daysSeq = 0;
let moodSeq = 0;
let dreamsSeq = 0;
let focusSeq = 0;
let changedTimer: ReturnType<typeof setTimeout> | undefined;

// ---- pure helpers (tested) ----

/** Hidden blocks never show, whatever the host sends. */
export function visibleDay(day: DiaryDay): DiaryDay {
  const keep = (blocks: DiaryBlock[]) => (blocks.some((b) => b.hiddenAt) ? blocks.filter((b) => !b.hiddenAt) : blocks);
  const anchors = keep(day.anchors);
  const imprints = keep(day.imprints);
  const narratives = keep(day.narratives);
  return anchors === day.anchors && imprints === day.imprints && narratives === day.narratives ? day : { ...day, anchors, imprints, narratives };
}

export function dayIsEmpty(day: DiaryDay): boolean {
  return !day.anchors.length && !day.imprints.length && !day.narratives.length;
}

/** The days without one block (a day left with nothing stays, so its heading can say so). */
export function withoutBlock(days: readonly DiaryDay[], id: number): DiaryDay[] {
  let changed = false;
  const out = days.map((d) => {
    const strip = (blocks: DiaryBlock[]) => {
      const next = blocks.filter((b) => b.id !== id);
      if (next.length !== blocks.length) changed = true;
      return next.length === blocks.length ? blocks : next;
    };
    const anchors = strip(d.anchors);
    const imprints = strip(d.imprints);
    const narratives = strip(d.narratives);
    return anchors === d.anchors && imprints === d.imprints && narratives === d.narratives ? d : { ...d, anchors, imprints, narratives };
  });
  return changed ? out : (days as DiaryDay[]);
}

/** Older days appended after the ones shown, each day once, newest first. */
export function appendOlder(shown: readonly DiaryDay[], older: readonly DiaryDay[]): DiaryDay[] {
  const known = new Set(shown.map((d) => d.day));
  const merged = [...shown, ...older.filter((d) => !known.has(d.day)).map(visibleDay)];
  return merged.sort((a, b) => (a.day < b.day ? 1 : a.day > b.day ? -1 : 0));
}

/** Where a search hit points in the diary, if anywhere. */
export function hitDay(hit: RecallHit): { day: string; blockId: number } | null {
  return hit.link.kind === 'diary' ? { day: hit.link.day, blockId: hit.link.blockId } : null;
}

// ---- the store ----

const diarySearch = createSearchSlice<DiaryState, RecallHit>({
  debounceMs: 250,
  search: (query) => api().call('recall.search', { query, sources: DIARY_SEARCH_SOURCES, limit: DIARY_SEARCH_LIMIT }),
});

function initialData() {
  return {
    days: { ...idle(), items: [], hasMore: false, loadingOlder: false, olderError: null },
    mood: { ...idle(), points: [] },
    range: 7 as MoodRange,
    query: '',
    search: emptySearch<RecallHit>(),
    focus: null,
    dreams: { ...idle(), items: [] },
    openDreamId: null,
  } satisfies Partial<DiaryState>;
}

export const useDiary = create<DiaryState>()((set, get) => ({
  ...initialData(),
  ...diarySearch.actions(set, get),

  async refreshDays() {
    const seq = ++daysSeq;
    const shown = get().days.loaded ? get().days.items.length : 0;
    const limit = Math.min(MAX_DAYS, Math.max(DAYS_PAGE, shown));
    set({ days: { ...get().days, loading: true } });
    try {
      const items = await api().call('diary.days', { limit });
      if (seq !== daysSeq) return;
      set({
        days: {
          items: items.map(visibleDay),
          hasMore: items.length >= limit,
          loaded: true,
          loading: false,
          error: null,
          loadingOlder: false,
          olderError: null,
        },
      });
    } catch (error) {
      if (seq === daysSeq) set({ days: { ...get().days, loaded: true, loading: false, error } });
    }
  },

  async loadOlder() {
    const { days } = get();
    const oldest = days.items[days.items.length - 1];
    if (!oldest || days.loadingOlder || !days.hasMore) return;
    const seq = daysSeq;
    set({ days: { ...days, loadingOlder: true, olderError: null } });
    try {
      const older = await api().call('diary.days', { limit: DAYS_PAGE, before: oldest.day });
      if (seq !== daysSeq) return;
      const cur = get().days;
      set({ days: { ...cur, items: appendOlder(cur.items, older), hasMore: older.length >= DAYS_PAGE, loadingOlder: false } });
    } catch (error) {
      if (seq === daysSeq) set({ days: { ...get().days, loadingOlder: false, olderError: error } });
    }
  },

  async refreshMood() {
    const seq = ++moodSeq;
    set({ mood: { ...get().mood, loading: true } });
    try {
      const points = await api().call('diary.mood', { days: MOOD_DAYS });
      if (seq === moodSeq) set({ mood: { points, loaded: true, loading: false, error: null } });
    } catch (error) {
      if (seq === moodSeq) set({ mood: { ...get().mood, loaded: true, loading: false, error } });
    }
  },

  setRange(range) {
    set({ range });
  },

  async goToDay(day, blockId = null) {
    if (!get().days.loaded) await get().refreshDays();
    for (let i = 0; i < MAX_PAGES_TO_FIND; i++) {
      const { items, hasMore } = get().days;
      const oldest = items[items.length - 1];
      if (items.some((d) => d.day === day) || !hasMore || !oldest || oldest.day < day) break;
      await get().loadOlder();
      if (get().days.olderError) break;
    }
    set({ focus: { day, blockId, seq: ++focusSeq } });
  },

  clearFocus() {
    set({ focus: null });
  },

  async hide(block) {
    const before = get().days.items;
    set({ days: { ...get().days, items: withoutBlock(before, block.id) } });
    try {
      await api().call('diary.hide', { id: block.id, hidden: true });
    } catch (error) {
      // Not hidden after all: it comes back as it was.
      void get().refreshDays();
      throw error;
    }
  },

  async unhide(block) {
    await api().call('diary.hide', { id: block.id, hidden: false });
    await get().refreshDays();
  },

  async refreshDreams() {
    const seq = ++dreamsSeq;
    set({ dreams: { ...get().dreams, loading: true } });
    try {
      const items = await api().call('dreams.list', { limit: DREAMS_LIMIT });
      if (seq !== dreamsSeq) return;
      const visible = items.filter((d) => !d.hiddenAt);
      const open = get().openDreamId;
      set({
        dreams: { items: visible, loaded: true, loading: false, error: null },
        openDreamId: open !== null && visible.some((d) => d.id === open) ? open : null,
      });
    } catch (error) {
      if (seq === dreamsSeq) set({ dreams: { ...get().dreams, loaded: true, loading: false, error } });
    }
  },

  openDream(id) {
    set({ openDreamId: id });
  },

  noteChanged() {
    clearTimeout(changedTimer);
    changedTimer = setTimeout(() => get().refreshShown(), 250);
  },

  refreshShown() {
    const s = get();
    const view = useApp.getState().view;
    if (view === 'diary') {
      void s.refreshDays();
      void s.refreshMood();
      if (s.query.trim()) void s.runSearch();
    } else if (view === 'dreams') {
      void s.refreshDreams();
    }
  },
}));

/** Tests start from a clean slate. */
export function resetDiaryStore(): void {
  diarySearch.cancel();
  clearTimeout(changedTimer);
  useDiary.setState(initialData());
}
