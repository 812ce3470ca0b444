import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError, type ApiMethod, type Entity, type EntityDetail, type EntityEdge, type GraphSlice } from '../../shared/api.js';
import { setClient } from '../api/index.js';
import { scriptedClient, type ScriptedClient } from '../api/scripted-client.js';
import { useApp } from './app.js';
import {
  addDays,
  atParam,
  dayOf,
  daysBetween,
  edgeIsHistory,
  graphIsEmpty,
  humanRelation,
  resetGraphStore,
  sortRelations,
  timeRange,
  toggleKindIn,
  useGraph,
  validityOf,
  viewInput,
  withEntity,
} from './graph.js';

function entity(id: number, name: string, over: Partial<Entity> = {}): Entity {
  return { id, kind: 'person', name, aliases: [], mentionCount: 1, firstSeen: null, lastSeen: null, status: 'active', mergedInto: null, ...over };
}

function edge(id: number, source: number, target: number, over: Partial<EntityEdge> = {}): EntityEdge {
  return { id, source, target, relation: 'co_mention', weight: 1, validFrom: null, validTo: null, evidenceMemoryIds: [], ...over };
}

const SELF = entity(1, 'Anima', { kind: 'self' });
const USER = entity(2, 'Sam', { kind: 'user' });
const ANA = entity(3, 'Ana', { mentionCount: 9 });
const PORTO = entity(4, 'Porto', { kind: 'place' });

function slice(over: Partial<GraphSlice> = {}): GraphSlice {
  return {
    mode: 'whole',
    centerId: null,
    nodes: [SELF, USER, ANA, PORTO],
    edges: [edge(10, 3, 4, { relation: 'lives_in', validFrom: '2019-09-01T00:00:00.000Z', validTo: '2025-06-01T00:00:00.000Z' }), edge(11, 2, 3)],
    totalEntities: 4,
    totalEdges: 2,
    earliest: null,
    ...over,
  };
}

function detail(e: Entity): EntityDetail {
  return { entity: e, profile: null, facts: [], relations: [], conversations: [], history: [] };
}

let handlers: ScriptedClient['handlers'];
let calls: ScriptedClient['calls'];

const tick = () => new Promise((r) => setTimeout(r, 0));
const callsOf = (m: ApiMethod) => calls.filter((c) => c.method === m).map((c) => c.input);

beforeEach(() => {
  useApp.setState({ view: 'graph' });
  const scripted = scriptedClient();
  ({ handlers, calls } = scripted);
  resetGraphStore();
  setClient(scripted.client);
});
afterEach(() => {
  resetGraphStore();
  setClient(null);
});

describe('pure helpers', () => {
  it('works in UTC calendar days', () => {
    expect(dayOf('2025-06-01T00:00:00.000Z')).toBe('2025-06-01');
    expect(dayOf('2025-06-01')).toBe('2025-06-01');
    expect(dayOf(null)).toBeNull();
    expect(dayOf('not a date')).toBeNull();
    expect(addDays('2025-02-27', 2)).toBe('2025-03-01');
    expect(addDays('2025-03-01', -1)).toBe('2025-02-28');
    expect(daysBetween('2024-12-30', '2025-01-02')).toBe(3);
    expect(atParam('2025-03-01')).toBe('2025-03-01T23:59:59.999Z');
  });

  it('spans the time slider from the earliest valid time (or first sighting) to today', () => {
    const s = slice();
    expect(timeRange(s.edges, s.nodes, '2026-01-10')).toEqual({ min: '2019-09-01', max: '2026-01-10' });
    expect(timeRange([], [{ firstSeen: '2024-05-05T10:00:00.000Z' }], '2026-01-10')).toEqual({ min: '2024-05-05', max: '2026-01-10' });
    // Nothing dated, or nothing before today: no past to show.
    expect(timeRange([edge(1, 1, 2)], [{ firstSeen: null }], '2026-01-10')).toBeNull();
    expect(timeRange([edge(1, 1, 2, { validFrom: '2026-01-10T08:00:00.000Z' })], [], '2026-01-10')).toBeNull();
    // What was learned from an earlier slice is kept: a later one drawn at a date may lack the oldest edges.
    expect(timeRange([], [], '2026-01-10', { min: '2010-01-01', max: '2026-01-09' })).toEqual({ min: '2010-01-01', max: '2026-01-10' });
    // The host's earliest valid time counts: the slice drawn now lacks the relations that ended.
    expect(timeRange([], [], '2026-01-10', null, '2016-09-15T00:00:00.000Z')).toEqual({ min: '2016-09-15', max: '2026-01-10' });
  });

  it('asks graph.view only for what is set, always keeping the two fixed entities with a kind filter', () => {
    expect(viewInput({ centerId: null, at: null, kinds: [] })).toEqual({});
    expect(viewInput({ centerId: 7, at: '2025-03-01', kinds: ['place'] })).toEqual({
      centerId: 7,
      at: '2025-03-01T23:59:59.999Z',
      kinds: ['place', 'self', 'user'],
    });
  });

  it('toggles kinds in their canonical order', () => {
    expect(toggleKindIn([], 'place')).toEqual(['place']);
    expect(toggleKindIn(['place'], 'person')).toEqual(['person', 'place']);
    expect(toggleKindIn(['person', 'place'], 'person')).toEqual(['place']);
  });

  it('calls a graph empty only when it holds nothing but the companion and the person', () => {
    expect(graphIsEmpty(null)).toBe(false);
    expect(graphIsEmpty(slice({ nodes: [SELF, USER], edges: [], totalEntities: 2, totalEdges: 0 }))).toBe(true);
    expect(graphIsEmpty(slice())).toBe(false);
  });

  it('tells history from a relation that still holds', () => {
    const closed = { validTo: '2025-06-01T00:00:00.000Z' };
    expect(edgeIsHistory(closed, '2025-06-01')).toBe(true);
    expect(edgeIsHistory(closed, '2025-05-31')).toBe(false);
    expect(edgeIsHistory({ validTo: null }, '2030-01-01')).toBe(false);
  });

  it('says a valid time as from … until …, since …, until …', () => {
    expect(validityOf({ validFrom: '2019-09-01T00:00:00.000Z', validTo: '2025-06-01T00:00:00.000Z' })).toEqual({
      key: 'fromUntil',
      from: '2019-09-01',
      until: '2025-06-01',
    });
    expect(validityOf({ validFrom: '2025-06-01', validTo: null })).toEqual({ key: 'since', from: '2025-06-01', until: null });
    expect(validityOf({ validFrom: null, validTo: '2025-06-01' })).toEqual({ key: 'until', from: null, until: '2025-06-01' });
    expect(validityOf({ validFrom: null, validTo: null }).key).toBeNull();
  });

  it('puts an edited entity into the slice, and takes a hidden or merged one off the map with its edges', () => {
    const s = slice();
    expect(withEntity(s, { ...ANA, name: 'Ana Sousa' }).nodes.find((n) => n.id === 3)?.name).toBe('Ana Sousa');
    const hidden = withEntity(s, { ...ANA, status: 'hidden' });
    expect(hidden.nodes.map((n) => n.id)).toEqual([1, 2, 4]);
    expect(hidden.edges).toEqual([]);
    expect(withEntity(s, entity(99, 'Nobody'))).toBe(s);
  });

  it('words and orders relations: named ones first, ended ones after, co-mentions last', () => {
    expect(humanRelation('lives_in')).toBe('lives in');
    const rels = [
      edge(1, 3, 5, { weight: 9 }),
      edge(2, 3, 4, { relation: 'lives_in', validTo: '2025-06-01' }),
      edge(3, 3, 6, { relation: 'lives_in', validFrom: '2025-06-01' }),
      edge(4, 3, 7, { relation: 'works_at', weight: 3 }),
    ];
    expect(sortRelations(rels).map((r) => r.id)).toEqual([4, 3, 2, 1]);
  });
});

describe('the graph store', () => {
  it('loads the map and learns the span of the time slider from it', async () => {
    handlers['graph.view'] = () => slice();
    await useGraph.getState().refresh();
    const s = useGraph.getState();
    expect(s.slice.data?.nodes).toHaveLength(4);
    expect(s.range?.min).toBe('2019-09-01');
    expect(callsOf('graph.view')).toEqual([{}]);
  });

  it('keeps the last map when a refresh fails, and says why', async () => {
    handlers['graph.view'] = () => slice();
    await useGraph.getState().refresh();
    handlers['graph.view'] = () => {
      throw new ApiError('internal', 'boom');
    };
    await useGraph.getState().refresh();
    expect(useGraph.getState().slice.data?.nodes).toHaveLength(4);
    expect(useGraph.getState().slice.error).toBeInstanceOf(ApiError);
  });

  it('filters by kind through the host', async () => {
    handlers['graph.view'] = () => slice();
    useGraph.getState().toggleKind('place');
    await tick();
    expect(callsOf('graph.view').at(-1)).toEqual({ kinds: ['place', 'self', 'user'] });
    useGraph.getState().clearKinds();
    await tick();
    expect(callsOf('graph.view').at(-1)).toEqual({});
  });

  it('moves the time slider within its span, settles before asking, and goes back to now', async () => {
    handlers['graph.view'] = () => slice();
    await useGraph.getState().refresh();
    calls.length = 0;
    useGraph.getState().setAt('2020-01-01');
    useGraph.getState().setAt('2021-03-01');
    expect(useGraph.getState().at).toBe('2021-03-01');
    await new Promise((r) => setTimeout(r, 160));
    expect(callsOf('graph.view')).toEqual([{ at: '2021-03-01T23:59:59.999Z' }]);
    // Before the span: its first day. Today or later: now.
    useGraph.getState().setAt('1990-01-01');
    expect(useGraph.getState().at).toBe('2019-09-01');
    useGraph.getState().setAt('2999-01-01');
    expect(useGraph.getState().at).toBeNull();
  });

  it('opens an entity in the panel and follows a merged one to what it became part of', async () => {
    handlers['graph.entity'] = ({ id }) => (id === 5 ? detail(entity(5, 'Ana S.', { status: 'merged', mergedInto: 3 })) : detail(ANA));
    useGraph.getState().select(5);
    await tick();
    await tick();
    expect(useGraph.getState().selectedId).toBe(3);
    expect(useGraph.getState().detail?.data?.entity.name).toBe('Ana');
    useGraph.getState().closePanel();
    expect(useGraph.getState().detail).toBeNull();
  });

  it('picks a search hit that is drawn: opens it and asks the map to centre on it', async () => {
    handlers['graph.view'] = () => slice();
    handlers['graph.entity'] = () => detail(ANA);
    await useGraph.getState().refresh();
    calls.length = 0;
    await useGraph.getState().pick(ANA);
    expect(useGraph.getState().selectedId).toBe(3);
    expect(useGraph.getState().focus?.id).toBe(3);
    expect(callsOf('graph.view')).toEqual([]);
  });

  it('picks a hit outside the neighbourhood drawn: recentres there', async () => {
    handlers['graph.view'] = ({ centerId }) =>
      slice({ mode: 'ego', centerId: centerId ?? 3, totalEntities: 5000, nodes: centerId === 42 ? [SELF, USER, entity(42, 'Zoe')] : slice().nodes });
    handlers['graph.entity'] = () => detail(entity(42, 'Zoe'));
    await useGraph.getState().refresh();
    await useGraph.getState().pick(entity(42, 'Zoe'));
    expect(callsOf('graph.view').at(-1)).toEqual({ centerId: 42 });
    expect(useGraph.getState().slice.data?.centerId).toBe(42);
    expect(useGraph.getState().focus?.id).toBe(42);
  });

  it('picks a hit hidden by the kind filter: shows every kind again', async () => {
    handlers['graph.view'] = ({ kinds }) => slice({ nodes: kinds ? [SELF, USER, PORTO] : slice().nodes });
    handlers['graph.entity'] = () => detail(ANA);
    useGraph.getState().toggleKind('place');
    await tick();
    await useGraph.getState().pick(ANA);
    expect(useGraph.getState().kinds).toEqual([]);
    expect(callsOf('graph.view').at(-1)).toEqual({});
  });

  it('searches after a pause, and only answers the latest query', async () => {
    handlers['graph.search'] = ({ query }) => (query === 'An' ? [ANA, entity(8, 'Andre', { status: 'merged', mergedInto: 3 })] : []);
    useGraph.getState().setQuery('A');
    useGraph.getState().setQuery('An');
    expect(useGraph.getState().search.loading).toBe(true);
    await new Promise((r) => setTimeout(r, 200));
    expect(callsOf('graph.search')).toEqual([{ query: 'An', limit: 12 }]);
    // Merged entities live on in another; they are not offered.
    expect(useGraph.getState().search.hits.map((h) => h.id)).toEqual([3]);
    useGraph.getState().setQuery('');
    expect(useGraph.getState().search.hits).toEqual([]);
  });

  it('renames at once on the map and in the panel, and undoes through the host', async () => {
    handlers['graph.view'] = () => slice();
    handlers['graph.entity'] = () => detail(ANA);
    await useGraph.getState().refresh();
    useGraph.getState().select(3);
    await tick();
    handlers['graph.rename'] = ({ id, name }) => ({ entity: { ...ANA, id, name }, changeId: 77 });
    const result = await useGraph.getState().rename(3, 'Ana Sousa');
    expect(result.changeId).toBe(77);
    expect(useGraph.getState().slice.data?.nodes.find((n) => n.id === 3)?.name).toBe('Ana Sousa');
    expect(useGraph.getState().detail?.data?.entity.name).toBe('Ana Sousa');

    handlers['graph.undo'] = () => ANA;
    await useGraph.getState().undo(77);
    expect(callsOf('graph.undo')).toEqual([{ changeId: 77 }]);
    expect(useGraph.getState().slice.data?.nodes.find((n) => n.id === 3)?.name).toBe('Ana');
  });

  it('passes refusals on to the caller (the panel shows them)', async () => {
    handlers['graph.rename'] = () => {
      throw new ApiError('invalid_input', 'A name cannot be empty.', 'name');
    };
    await expect(useGraph.getState().rename(3, '  ')).rejects.toMatchObject({ code: 'invalid_input' });
  });

  it('hides: off the map at once, the panel stays to offer it back', async () => {
    handlers['graph.view'] = () => slice();
    handlers['graph.entity'] = () => detail(ANA);
    await useGraph.getState().refresh();
    useGraph.getState().select(3);
    await tick();
    handlers['graph.hide'] = ({ hidden }) => ({ entity: { ...ANA, status: hidden ? 'hidden' : 'active' }, changeId: 5 });
    handlers['graph.view'] = () => slice({ nodes: [SELF, USER, PORTO], edges: [] });
    await useGraph.getState().setHidden(3, true);
    expect(useGraph.getState().slice.data?.nodes.some((n) => n.id === 3)).toBe(false);
    expect(useGraph.getState().detail?.data?.entity.status).toBe('hidden');
    expect(useGraph.getState().selectedId).toBe(3);
  });

  it('merges: the panel follows the entity that is kept', async () => {
    handlers['graph.view'] = () => slice();
    handlers['graph.entity'] = ({ id }) => detail(id === 3 ? ANA : entity(id, 'Ana S.'));
    useGraph.getState().select(9);
    await tick();
    handlers['graph.merge'] = () => ({ entity: { ...ANA, aliases: ['Ana S.'] }, changeId: 12 });
    await useGraph.getState().merge(3, 9);
    expect(callsOf('graph.merge')).toEqual([{ keepId: 3, mergeId: 9 }]);
    expect(useGraph.getState().selectedId).toBe(3);
    await tick();
    expect(useGraph.getState().detail?.data?.entity.id).toBe(3);
  });

  it('follows graph.changed only while the Graph view is on screen, once per burst', async () => {
    handlers['graph.view'] = () => slice();
    useGraph.getState().noteChanged([3]);
    useGraph.getState().noteChanged([4]);
    await new Promise((r) => setTimeout(r, 300));
    expect(callsOf('graph.view')).toHaveLength(1);
    useApp.setState({ view: 'chat' });
    useGraph.getState().noteChanged([3]);
    await new Promise((r) => setTimeout(r, 300));
    expect(callsOf('graph.view')).toHaveLength(1);
  });
});
