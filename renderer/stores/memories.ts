import { create } from 'zustand';
import type { ApiEvents, ApiInput, ApiOutputs, Memory, MemoryChange, RecallHit, ResidentPreview, SaveMemoryResult } from '../../shared/api.js';
import { api } from '../api/index.js';
import { useApp } from './app.js';
import { idle, isNotFound, type Loadable } from './loadable.js';
import { createSearchSlice, emptySearch, type SearchSlice } from './searchSlice.js';
import {
  DEFAULT_FILTERS,
  filtersAreDefault,
  listInput,
  memoryIdsOfHits,
  orderById,
  sortPins,
  upsertInList,
  type CacheEntry,
  type MemoryFilters,
} from '../lib/memories.js';

export type MemoryDetail = ApiOutputs['memories.get'];
export type MemoryPeek = Pick<Memory, 'id' | 'type' | 'content'>;

export const PAGE_SIZE = 50;
export const SEARCH_LIMIT = 40;
const MAX_PAGE = 200;
/** The Memories view's search is the companion's own recall, over long-term memories only. */
export const SEARCH_SOURCES = ['semantic'] as const;

export interface MemoriesState extends SearchSlice<RecallHit> {
  /** Every memory looked at in this window, by id: chips, popovers and search results read from it. */
  cache: Record<number, CacheEntry>;
  /** What chat.injected said about a memory, shown until the full memory has been fetched. */
  peek: Record<number, MemoryPeek>;
  /** Live "remembered N things" for replies still being written, by message id. */
  injectedLive: Record<string, number[]>;

  filters: MemoryFilters;
  list: Loadable & { items: Memory[]; total: number };
  /** Whether any memory exists at all, in any state: the honest empty state needs to know. */
  anyAtAll: boolean | null;
  panel: 'none' | 'detail' | 'add';
  selectedId: number | null;
  detail: (Loadable & { id: number; data: MemoryDetail | null }) | null;

  pins: Loadable & { items: Memory[] };
  resident: Loadable & { data: ResidentPreview | null };
  /** What just happened to the open memory ("Saved your correction"), with its undo. */
  flash: MemoryFlash | null;

  ensure(id: number): Promise<void>;
  fetchMemory(id: number): Promise<void>;
  noteInjected(payload: ApiEvents['chat.injected']): void;
  noteChanged(change: MemoryChange): void;
  /** Whatever is on screen is fetched again; with chips too after the event stream came back. */
  refreshShown(alsoChips?: boolean): void;

  setFilters(filters: MemoryFilters): void;
  refreshList(): Promise<void>;
  loadMore(): Promise<void>;
  select(id: number | null): void;
  openAdd(): void;
  closePanel(): void;
  loadDetail(id: number, quiet?: boolean): Promise<void>;

  create(input: ApiInput<'memories.create'>): Promise<SaveMemoryResult>;
  update(input: ApiInput<'memories.update'>): Promise<SaveMemoryResult>;
  /** With `withSources`, the messages it came from leave recall too (they stay in their conversations). */
  forget(id: number, withSources?: boolean): Promise<SaveMemoryResult>;
  setPinned(id: number, pinned: boolean): Promise<SaveMemoryResult>;
  undo(changeId: number): Promise<Memory>;
  refreshPins(): Promise<void>;
  refreshResident(): Promise<void>;
  reorderPins(ids: number[]): Promise<void>;
  /** A memory's newest state: into the cache, the list, the pins and the open detail. */
  putMemory(memory: Memory, addNew?: boolean): void;
  setFlash(flash: MemoryFlash | null): void;
}

export interface MemoryFlash {
  memoryId: number;
  /** An i18n key under memories.flash. */
  key: 'created' | 'updatedInstead' | 'edited' | 'replaced' | 'pinned' | 'unpinned' | 'restored' | 'undone';
  /** The journal entry Undo takes back; null when there is nothing to undo. */
  changeId: number | null;
}

let listSeq = 0;
let detailSeq = 0;
let pinsSeq = 0;
let residentSeq = 0;
let changedTimer: ReturnType<typeof setTimeout> | undefined;
const inflight = new Map<number, Promise<void>>();

/** The store's data before anything is loaded — also what a reset returns to. */
function initialData() {
  return {
    cache: {},
    peek: {},
    injectedLive: {},
    query: '',
    filters: DEFAULT_FILTERS,
    list: { ...idle(), items: [], total: 0 },
    search: emptySearch<RecallHit>(),
    anyAtAll: null,
    panel: 'none',
    selectedId: null,
    detail: null,
    pins: { ...idle(), items: [] },
    resident: { ...idle(), data: null },
    flash: null,
  } satisfies Partial<MemoriesState>;
}

const memorySearch = createSearchSlice<MemoriesState, RecallHit>({
  debounceMs: 250,
  search: (query) => api().call('recall.search', { query, sources: [...SEARCH_SOURCES], limit: SEARCH_LIMIT }),
  // Hits carry the words, not the counts or the state: the cards need the memories themselves.
  afterHits: (hits, get) => Promise.all(memoryIdsOfHits(hits).map((id) => get().ensure(id))),
  // An emptied box shows the list again.
  onCleared: (get) => void get().refreshList(),
});

export const useMemories = create<MemoriesState>()((set, get) => ({
  ...initialData(),
  ...memorySearch.actions(set, get),

  ensure(id) {
    const entry = get().cache[id];
    if (entry && entry.status !== 'error') return inflight.get(id) ?? Promise.resolve();
    return get().fetchMemory(id);
  },

  fetchMemory(id) {
    const running = inflight.get(id);
    if (running) return running;
    const previous = get().cache[id];
    set({ cache: { ...get().cache, [id]: { status: 'loading', memory: previous?.memory ?? null } } });
    const p = (async () => {
      try {
        const { memory } = await api().call('memories.get', { id });
        set({ cache: { ...get().cache, [id]: { status: 'ok', memory } } });
      } catch (error) {
        const entry: CacheEntry = isNotFound(error) ? { status: 'missing', memory: null } : { status: 'error', memory: previous?.memory ?? null, error };
        set({ cache: { ...get().cache, [id]: entry } });
      } finally {
        inflight.delete(id);
      }
    })();
    inflight.set(id, p);
    return p;
  },

  noteInjected({ messageId, memories }) {
    const peek = { ...get().peek };
    for (const m of memories) peek[m.id] = { id: m.id, type: m.type, content: m.content };
    set({ peek, injectedLive: { ...get().injectedLive, [messageId]: memories.map((m) => m.id) } });
  },

  noteChanged(change) {
    // The memory the change is about, and (for a supersede) its successor, are fetched again
    // wherever a chip or card shows them.
    const touched = new Set<number>([change.memoryId]);
    const successor = change.after?.supersededBy;
    if (typeof successor === 'number') touched.add(successor);
    for (const id of touched) if (get().cache[id]) void get().fetchMemory(id);
    if (change.action === 'create' || change.action === 'undo' || change.action === 'restore') {
      if (get().anyAtAll === false) set({ anyAtAll: null });
    }
    // A burst (a night's consolidation, a merge) refreshes the views once.
    clearTimeout(changedTimer);
    changedTimer = setTimeout(() => get().refreshShown(), 200);
  },

  refreshShown(alsoChips = false) {
    const s = get();
    // Only what is on screen: the views fetch afresh when they are opened again.
    const view = useApp.getState().view;
    if (view === 'memories') {
      if (s.query.trim()) void s.runSearch();
      else if (s.list.loaded) void s.refreshList();
      if (s.detail) void s.loadDetail(s.detail.id, true);
    }
    if (view === 'pins') {
      if (s.pins.loaded) void s.refreshPins();
      if (s.resident.loaded) void s.refreshResident();
    }
    if (!alsoChips) return;
    for (const [key, entry] of Object.entries(s.cache)) {
      if (entry.status === 'ok' || entry.status === 'error') void s.fetchMemory(Number(key));
    }
  },

  setFilters(filters) {
    set({ filters, list: { ...get().list, items: [], total: 0, loaded: false } });
    if (!get().query.trim()) void get().refreshList();
  },

  async refreshList() {
    const seq = ++listSeq;
    const { filters } = get();
    const shown = get().list.loaded ? get().list.items.length : 0;
    const limit = Math.min(MAX_PAGE, Math.max(PAGE_SIZE, shown));
    set({ list: { ...get().list, loading: true } });
    try {
      const { items, total } = await api().call('memories.list', listInput(filters, 0, limit));
      if (seq !== listSeq) return;
      set({ list: { items, total, loaded: true, loading: false, error: null } });
      primeCache(items);
      if (total > 0) set({ anyAtAll: true });
      else if (filtersAreDefault(filters)) {
        // Nothing active: is there really nothing, or only forgotten and replaced memories?
        const all = await api().call('memories.list', { statuses: ['active', 'superseded', 'expired'], limit: 1 });
        if (seq === listSeq) set({ anyAtAll: all.total > 0 });
      }
    } catch (error) {
      if (seq === listSeq) set({ list: { ...get().list, loaded: true, loading: false, error } });
    }
  },

  async loadMore() {
    const { list, filters } = get();
    if (list.loading || list.items.length >= list.total) return;
    const seq = ++listSeq;
    set({ list: { ...list, loading: true } });
    try {
      const { items, total } = await api().call('memories.list', listInput(filters, list.items.length, PAGE_SIZE));
      if (seq !== listSeq) return;
      const known = new Set(get().list.items.map((m) => m.id));
      set({ list: { items: [...get().list.items, ...items.filter((m) => !known.has(m.id))], total, loaded: true, loading: false, error: null } });
      primeCache(items);
    } catch (error) {
      if (seq === listSeq) set({ list: { ...get().list, loading: false, error } });
    }
  },

  select(id) {
    if (id === null) {
      set({ selectedId: null, panel: 'none', detail: null, flash: null });
      return;
    }
    set({ selectedId: id, panel: 'detail', flash: get().flash?.memoryId === id ? get().flash : null });
    if (get().detail?.id !== id) void get().loadDetail(id);
  },

  openAdd() {
    set({ panel: 'add', selectedId: null, detail: null, flash: null });
  },

  closePanel() {
    set({ panel: 'none', selectedId: null, detail: null, flash: null });
  },

  setFlash(flash) {
    set({ flash });
  },

  async loadDetail(id, quiet = false) {
    const seq = ++detailSeq;
    const current = get().detail?.id === id ? get().detail : null;
    set({ detail: { id, data: current?.data ?? null, loaded: current?.loaded ?? false, loading: !quiet, error: null } });
    try {
      const data = await api().call('memories.get', { id });
      if (seq !== detailSeq) return;
      set({ detail: { id, data, loaded: true, loading: false, error: null } });
      primeCache([data.memory, ...data.chain]);
    } catch (error) {
      if (seq !== detailSeq) return;
      set({ detail: { id, data: quiet ? (current?.data ?? null) : null, loaded: true, loading: false, error } });
      if (isNotFound(error)) set({ cache: { ...get().cache, [id]: { status: 'missing', memory: null } } });
    }
  },

  async create(input) {
    const result = await api().call('memories.create', input);
    get().putMemory(result.memory, true);
    set({ anyAtAll: true });
    return result;
  },

  async update(input) {
    const result = await api().call('memories.update', input);
    // An edit to a new value comes back as the new memory that superseded the edited one.
    get().putMemory(result.memory, result.superseded !== undefined);
    return result;
  },

  async forget(id, withSources) {
    const result = await api().call('memories.forget', withSources ? { id, withSources: true } : { id });
    get().putMemory(result.memory);
    return result;
  },

  async setPinned(id, pinned) {
    const result = await api().call('memories.pin', { id, pinned });
    get().putMemory(result.memory);
    if (get().pins.loaded) void get().refreshPins();
    if (get().resident.loaded) void get().refreshResident();
    return result;
  },

  async undo(changeId) {
    const memory = await api().call('memories.undo', { changeId });
    get().putMemory(memory, true);
    get().refreshShown();
    return memory;
  },

  async refreshPins() {
    const seq = ++pinsSeq;
    set({ pins: { ...get().pins, loading: true } });
    try {
      const { items } = await api().call('memories.list', { pinned: true, limit: MAX_PAGE });
      if (seq !== pinsSeq) return;
      set({ pins: { items: sortPins(items), loaded: true, loading: false, error: null } });
      primeCache(items);
    } catch (error) {
      if (seq === pinsSeq) set({ pins: { ...get().pins, loaded: true, loading: false, error } });
    }
  },

  async refreshResident() {
    const seq = ++residentSeq;
    set({ resident: { ...get().resident, loading: true } });
    try {
      const data = await api().call('memories.resident', {});
      if (seq === residentSeq) set({ resident: { data, loaded: true, loading: false, error: null } });
    } catch (error) {
      if (seq === residentSeq) set({ resident: { ...get().resident, loaded: true, loading: false, error } });
    }
  },

  async reorderPins(ids) {
    const seq = ++pinsSeq;
    // The list moves at once; the host's answer (or a fresh copy, if it refused) settles it.
    set({ pins: { ...get().pins, items: orderById(get().pins.items, ids) } });
    try {
      const items = await api().call('memories.reorderPins', { ids });
      if (seq === pinsSeq) set({ pins: { items: sortPins(items), loaded: true, loading: false, error: null } });
      primeCache(items);
      if (get().resident.loaded) void get().refreshResident();
    } catch (error) {
      void get().refreshPins();
      throw error;
    }
  },

  putMemory(memory, addNew = false) {
    const s = get();
    const pinsItems = s.pins.items;
    const inPins = pinsItems.some((m) => m.id === memory.id);
    const pins = memory.pinned ? (inPins ? pinsItems.map((m) => (m.id === memory.id ? memory : m)) : pinsItems) : pinsItems.filter((m) => m.id !== memory.id);
    const before = s.list.items;
    const items = s.query.trim() ? before : upsertInList(before, memory, s.filters, addNew);
    const total = s.list.total + (items.length - before.length);
    let detail = s.detail;
    if (detail?.data) {
      const d = detail.data;
      if (d.memory.id === memory.id || d.chain.some((m) => m.id === memory.id)) {
        detail = {
          ...detail,
          data: { ...d, memory: d.memory.id === memory.id ? memory : d.memory, chain: d.chain.map((m) => (m.id === memory.id ? memory : m)) },
        };
      }
    }
    set({
      cache: { ...s.cache, [memory.id]: { status: 'ok', memory } },
      pins: pins === pinsItems ? s.pins : { ...s.pins, items: pins },
      list: items === before ? s.list : { ...s.list, items, total: Math.max(0, total) },
      detail,
    });
  },
}));

/** A memory seen in a list is as good as fetched, for chips and search cards. */
function primeCache(memories: readonly Memory[]) {
  const cache = useMemories.getState().cache;
  let next: Record<number, CacheEntry> | null = null;
  for (const memory of memories) {
    const entry = cache[memory.id];
    if (entry?.status === 'ok' && entry.memory === memory) continue;
    next ??= { ...cache };
    next[memory.id] = { status: 'ok', memory };
  }
  if (next) useMemories.setState({ cache: next });
}

/** From a chip, a card or a pin: show this memory in the Memories view. */
export function selectMemory(id: number): void {
  useMemories.getState().select(id);
}

/** Tests start from a clean slate. */
export function resetMemoriesStore(): void {
  memorySearch.cancel();
  clearTimeout(changedTimer);
  inflight.clear();
  useMemories.setState(initialData());
}
