// The Graph view's data: the slice of the entity graph on the map (the whole graph, or the
// neighbourhood of one entity when it is too big to draw), the kind filters and the time slider that
// shape it, the search box, and the side panel with the selected entity and its edits (rename, alias,
// merge, hide), each of which the host journals and can undo.
import { create } from 'zustand';
import { ENTITY_KINDS, type ApiInput, type Entity, type EntityDetail, type EntityEdge, type EntityKind, type GraphSlice } from '../../shared/api.js';
import { api } from '../api/index.js';
import { useApp } from './app.js';
import { idle, isNotFound, type Loadable } from './loadable.js';
import { createSearchSlice, emptySearch, type SearchSlice } from './searchSlice.js';

export const SEARCH_LIMIT = 12;
/** The kinds the filter chips offer; the companion and the person are always on the map. */
export const FILTER_KINDS = ENTITY_KINDS.filter((k): k is Exclude<EntityKind, 'self' | 'user'> => k !== 'self' && k !== 'user');
export const FIXED_KINDS: readonly EntityKind[] = ['self', 'user'];

/** A first and last day (YYYY-MM-DD, UTC) the time slider runs between. */
export interface DayRange {
  min: string;
  max: string;
}

export interface GraphFocus {
  id: number;
  /** Changes on every request, so asking for the same node twice centres it again. */
  seq: number;
}

export interface GraphState extends SearchSlice<Entity> {
  slice: Loadable & { data: GraphSlice | null };
  /** Kinds to show; empty: every kind. */
  kinds: EntityKind[];
  /** The day the map shows (YYYY-MM-DD), or null for now. */
  at: string | null;
  /** What the time slider spans: every valid time seen on an edge and every first sighting. */
  range: DayRange | null;
  /** The entity whose neighbourhood is asked for (only matters when the host answers in 'ego' mode). */
  centerId: number | null;
  selectedId: number | null;
  detail: (Loadable & { id: number; data: EntityDetail | null }) | null;
  focus: GraphFocus | null;

  refresh(): Promise<void>;
  toggleKind(kind: EntityKind): void;
  clearKinds(): void;
  /** Move the time slider (debounced fetch); null goes back to now. */
  setAt(day: string | null): void;
  /** Explore from here: the neighbourhood of this entity. */
  recenter(id: number | null): Promise<void>;
  select(id: number | null): void;
  closePanel(): void;
  loadDetail(id: number, quiet?: boolean): Promise<void>;
  /** Centre the map on this entity (and open it), fetching its neighbourhood when it is not drawn. */
  pick(entity: Pick<Entity, 'id' | 'kind'>): Promise<void>;
  /** A search that leaves the toolbar alone (the merge picker's). */
  searchOnly(query: string): Promise<Entity[]>;

  rename(id: number, name: string): Promise<{ entity: Entity; changeId: number }>;
  addAlias(id: number, alias: string): Promise<{ entity: Entity; changeId: number }>;
  merge(keepId: number, mergeId: number): Promise<{ entity: Entity; changeId: number }>;
  setHidden(id: number, hidden: boolean): Promise<{ entity: Entity; changeId: number }>;
  undo(changeId: number): Promise<Entity>;

  /** From graph.changed: what is on screen is fetched again (debounced). */
  noteChanged(entityIds: number[]): void;
  refreshShown(): void;
}

// ---- pure helpers (tested) ----

const DAY_MS = 86_400_000;

/** The UTC calendar day of an ISO time, or null for nothing or nonsense. */
export function dayOf(iso: string | null | undefined): string | null {
  if (!iso) return null;
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return null;
  return new Date(t).toISOString().slice(0, 10);
}

export function addDays(day: string, n: number): string {
  return new Date(Date.parse(`${day}T00:00:00.000Z`) + n * DAY_MS).toISOString().slice(0, 10);
}

export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00.000Z`) - Date.parse(`${from}T00:00:00.000Z`)) / DAY_MS);
}

/**
 * The span of the time slider: from the earliest valid time on any edge (the host's `earliest`: the
 * slice drawn now lacks the relations that ended) or on an edge drawn, or the first sighting of an
 * entity, to today. Null when nothing is dated before today — then there is no past to show.
 */
export function timeRange(
  edges: readonly Pick<EntityEdge, 'validFrom' | 'validTo'>[],
  nodes: readonly Pick<Entity, 'firstSeen'>[],
  today: string,
  previous: DayRange | null = null,
  earliest: string | null = null,
): DayRange | null {
  let min = previous?.min ?? null;
  const consider = (iso: string | null | undefined) => {
    const d = dayOf(iso);
    if (d && (min === null || d < min)) min = d;
  };
  for (const e of edges) {
    consider(e.validFrom);
    consider(e.validTo);
  }
  for (const n of nodes) consider(n.firstSeen);
  consider(earliest);
  if (min === null || min >= today) return null;
  return { min, max: today };
}

/** What graph.view is asked for `at`: the end of that day, so whatever began on it is shown. */
export function atParam(day: string): string {
  return `${day}T23:59:59.999Z`;
}

export function viewInput(s: { centerId: number | null; at: string | null; kinds: readonly EntityKind[] }): ApiInput<'graph.view'> {
  const input: ApiInput<'graph.view'> = {};
  if (s.centerId !== null) input.centerId = s.centerId;
  if (s.at) input.at = atParam(s.at);
  // The companion and the person stay on the map whatever is filtered.
  if (s.kinds.length) input.kinds = ENTITY_KINDS.filter((k) => s.kinds.includes(k) || FIXED_KINDS.includes(k));
  return input;
}

export function toggleKindIn(kinds: readonly EntityKind[], kind: EntityKind): EntityKind[] {
  const next = kinds.includes(kind) ? kinds.filter((k) => k !== kind) : [...kinds, kind];
  return ENTITY_KINDS.filter((k) => next.includes(k));
}

/** Nothing learned yet: only the companion and the person, and no connection worth the name. */
export function graphIsEmpty(slice: GraphSlice | null): boolean {
  if (!slice) return false;
  return slice.totalEntities <= 2 && slice.nodes.every((n) => n.kind === 'self' || n.kind === 'user');
}

/** Is a relation over by this day (or today)? */
export function edgeIsHistory(edge: Pick<EntityEdge, 'validTo'>, day: string): boolean {
  const to = edge.validTo ? Date.parse(edge.validTo) : NaN;
  return !Number.isNaN(to) && to <= Date.parse(atParam(day));
}

/** How a relation's valid time is said: from … until …, since …, until …, or not at all. */
export function validityOf(edge: Pick<EntityEdge, 'validFrom' | 'validTo'>): {
  key: 'fromUntil' | 'since' | 'until' | null;
  from: string | null;
  until: string | null;
} {
  const from = dayOf(edge.validFrom);
  const until = dayOf(edge.validTo);
  if (from && until) return { key: 'fromUntil', from, until };
  if (until) return { key: 'until', from: null, until };
  if (from) return { key: 'since', from, until: null };
  return { key: null, from: null, until: null };
}

/** The entity with one field changed, wherever the slice shows it. */
export function withEntity(slice: GraphSlice, entity: Entity): GraphSlice {
  if (!slice.nodes.some((n) => n.id === entity.id)) return slice;
  if (entity.status !== 'active') {
    const nodes = slice.nodes.filter((n) => n.id !== entity.id);
    const edges = slice.edges.filter((e) => e.source !== entity.id && e.target !== entity.id);
    return { ...slice, nodes, edges };
  }
  return { ...slice, nodes: slice.nodes.map((n) => (n.id === entity.id ? entity : n)) };
}

/** "lives_in" → "lives in", for relations the UI has no words of its own for. */
export function humanRelation(relation: string): string {
  return relation.replace(/[_-]+/g, ' ').trim();
}

/** Relations first by kind (typed before co-mention), then the strongest, then the newest. */
export function sortRelations<T extends Pick<EntityEdge, 'relation' | 'weight' | 'validFrom' | 'validTo'>>(relations: readonly T[]): T[] {
  const rank = (r: T) => (r.relation === 'co_mention' ? 2 : r.validTo ? 1 : 0);
  return [...relations].sort((a, b) => rank(a) - rank(b) || b.weight - a.weight || (b.validFrom ?? '').localeCompare(a.validFrom ?? ''));
}

// ---- the store ----

let sliceSeq = 0;
let detailSeq = 0;
let focusSeq = 0;
let atTimer: ReturnType<typeof setTimeout> | undefined;
let changedTimer: ReturnType<typeof setTimeout> | undefined;

function today(): string {
  return new Date().toISOString().slice(0, 10);
}

function initialData() {
  return {
    slice: { ...idle(), data: null },
    kinds: [] as EntityKind[],
    at: null,
    range: null,
    centerId: null,
    selectedId: null,
    detail: null,
    focus: null,
    query: '',
    search: emptySearch<Entity>(),
  } satisfies Partial<GraphState>;
}

/** Entities for a search; merged ones are left out (each lives on in the one it became part of). */
async function findEntities(query: string): Promise<Entity[]> {
  const hits = await api().call('graph.search', { query, limit: SEARCH_LIMIT });
  return hits.filter((h) => h.status !== 'merged');
}

const entitySearch = createSearchSlice<GraphState, Entity>({ debounceMs: 150, search: findEntities, runDropsPending: true });

export const useGraph = create<GraphState>()((set, get) => ({
  ...initialData(),
  ...entitySearch.actions(set, get),

  async refresh() {
    const seq = ++sliceSeq;
    set({ slice: { ...get().slice, loading: true } });
    try {
      const data = await api().call('graph.view', viewInput(get()));
      if (seq !== sliceSeq) return;
      set({
        slice: { data, loaded: true, loading: false, error: null },
        // The slider reaches back to the earliest dated relation, drawn now or not (closed ones are history).
        range: timeRange([...data.edges, { validFrom: data.earliest, validTo: null }], data.nodes, today(), get().range),
      });
    } catch (error) {
      if (seq === sliceSeq) set({ slice: { ...get().slice, loaded: true, loading: false, error } });
    }
  },

  toggleKind(kind) {
    set({ kinds: toggleKindIn(get().kinds, kind) });
    void get().refresh();
  },

  clearKinds() {
    if (!get().kinds.length) return;
    set({ kinds: [] });
    void get().refresh();
  },

  setAt(day) {
    const range = get().range;
    const next = day && range && day < range.max ? (day < range.min ? range.min : day) : null;
    if (next === get().at) return;
    set({ at: next });
    clearTimeout(atTimer);
    // Dragging the slider sends one request when it settles, not one per day passed.
    atTimer = setTimeout(() => void get().refresh(), 120);
  },

  async recenter(id) {
    set({ centerId: id });
    await get().refresh();
    if (id !== null) set({ focus: { id, seq: ++focusSeq } });
  },

  select(id) {
    if (id === null) {
      get().closePanel();
      return;
    }
    set({ selectedId: id });
    if (get().detail?.id !== id) void get().loadDetail(id);
  },

  closePanel() {
    detailSeq++;
    set({ selectedId: null, detail: null });
  },

  async loadDetail(id, quiet = false) {
    const seq = ++detailSeq;
    const current = get().detail?.id === id ? get().detail : null;
    set({ detail: { id, data: current?.data ?? null, loaded: current?.loaded ?? false, loading: !quiet, error: null } });
    try {
      const data = await api().call('graph.entity', { id });
      if (seq !== detailSeq) return;
      set({ detail: { id, data, loaded: true, loading: false, error: null } });
      // A merged entity lives on in the one it became part of.
      if (data.entity.status === 'merged' && data.entity.mergedInto !== null && get().selectedId === id) {
        get().select(data.entity.mergedInto);
      }
    } catch (error) {
      if (seq !== detailSeq) return;
      set({ detail: { id, data: quiet && !isNotFound(error) ? (current?.data ?? null) : null, loaded: true, loading: false, error } });
    }
  },

  async pick(entity) {
    const s = get();
    s.select(entity.id);
    const drawn = s.slice.data?.nodes.some((n) => n.id === entity.id) ?? false;
    if (!drawn) {
      // Filtered out by kind: show every kind again. Outside the neighbourhood drawn: go there.
      if (s.kinds.length && !s.kinds.includes(entity.kind) && !FIXED_KINDS.includes(entity.kind)) set({ kinds: [] });
      if (s.slice.data?.mode === 'ego') set({ centerId: entity.id });
      await get().refresh();
    }
    set({ focus: { id: entity.id, seq: ++focusSeq } });
  },

  searchOnly(query) {
    return findEntities(query);
  },

  async rename(id, name) {
    const result = await api().call('graph.rename', { id, name });
    putEntity(result.entity);
    return result;
  },

  async addAlias(id, alias) {
    const result = await api().call('graph.addAlias', { id, alias });
    putEntity(result.entity);
    return result;
  },

  async merge(keepId, mergeId) {
    const result = await api().call('graph.merge', { keepId, mergeId });
    putEntity(result.entity);
    if (get().selectedId === mergeId) get().select(keepId);
    void get().refresh();
    if (get().detail) void get().loadDetail(get().detail!.id, true);
    return result;
  },

  async setHidden(id, hidden) {
    const result = await api().call('graph.hide', { id, hidden });
    putEntity(result.entity);
    void get().refresh();
    return result;
  },

  async undo(changeId) {
    const entity = await api().call('graph.undo', { changeId });
    putEntity(entity);
    void get().refresh();
    const open = get().detail?.id;
    if (open !== undefined) void get().loadDetail(open, true);
    return entity;
  },

  noteChanged(entityIds) {
    void entityIds;
    clearTimeout(changedTimer);
    changedTimer = setTimeout(() => get().refreshShown(), 250);
  },

  refreshShown() {
    if (useApp.getState().view !== 'graph') return;
    const s = get();
    void s.refresh();
    if (s.detail) void s.loadDetail(s.detail.id, true);
    if (s.query.trim()) void s.runSearch();
  },
}));

/** An entity's newest state: into the map and the open panel at once (a fresh copy follows). */
function putEntity(entity: Entity): void {
  const s = useGraph.getState();
  const data = s.slice.data;
  const detail = s.detail;
  useGraph.setState({
    slice: data ? { ...s.slice, data: withEntity(data, entity) } : s.slice,
    detail: detail?.data && detail.data.entity.id === entity.id ? { ...detail, data: { ...detail.data, entity } } : detail,
    search: s.search.hits.some((h) => h.id === entity.id) ? { ...s.search, hits: s.search.hits.map((h) => (h.id === entity.id ? entity : h)) } : s.search,
  });
}

/** Tests start from a clean slate. */
export function resetGraphStore(): void {
  entitySearch.cancel();
  clearTimeout(atTimer);
  clearTimeout(changedTimer);
  useGraph.setState(initialData());
}
