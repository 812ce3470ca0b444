import type { DomainHandlers, HostServices } from './types.js';

/** The Graph view draws the whole graph up to this many entities (cytoscape stays interactive there). */
const WHOLE_GRAPH_LIMIT = 2_000;

export const graphHandlers = (s: HostServices): DomainHandlers<'graph'> => ({
  'graph.view': async (input) => {
    // Without a date the graph is as it is now: relations whose valid time closed are history, seen on the time slider.
    const filter = { kinds: input.kinds, at: input.at ?? s.now().toISOString() };
    const totals = await s.graph.graph({ ...filter, limit: 1 });
    const earliest = await s.graph.earliestValidTime();
    // Up to this many the whole graph is drawn; above it, a neighbourhood the view can explore from.
    if (input.centerId === undefined && (totals.totalEntities ?? 0) <= WHOLE_GRAPH_LIMIT) {
      // Every edge among the drawn entities: a hub's edges are what make it a hub on the map.
      const whole = await s.graph.graph({ ...filter, limit: input.limit ?? WHOLE_GRAPH_LIMIT, edgesPerNode: WHOLE_GRAPH_LIMIT });
      return {
        mode: 'whole',
        centerId: null,
        nodes: whole.nodes,
        edges: whole.edges,
        totalEntities: whole.totalEntities ?? 0,
        totalEdges: whole.totalEdges ?? 0,
        earliest,
      };
    }
    const centerId = input.centerId ?? (await s.graph.defaultCentre());
    const ego = await s.graph.ego(centerId, { ...filter, hops: input.hops ?? 2, limit: input.limit ?? 300 });
    return {
      mode: 'ego',
      centerId,
      nodes: ego.nodes,
      edges: ego.edges,
      totalEntities: totals.totalEntities ?? 0,
      totalEdges: totals.totalEdges ?? 0,
      earliest,
    };
  },
  'graph.search': (input) => s.graph.search(input.query, input.limit ?? 20),
  'graph.entity': async (input) => {
    const { factIds, profileMemoryId, ...detail } = await s.graph.get(input.id);
    const [profile] = profileMemoryId === null ? [] : await s.memories.getMany([profileMemoryId]);
    return { ...detail, profile: profile ?? null, facts: await s.memories.getMany(factIds) };
  },
  'graph.rename': (input) => s.graph.rename(input.id, input.name),
  'graph.addAlias': (input) => s.graph.addAlias(input.id, input.alias),
  'graph.merge': (input) => s.graph.merge(input.keepId, input.mergeId),
  'graph.hide': (input) => s.graph.hide(input.id, input.hidden),
  'graph.undo': (input) => s.graph.undo(input.changeId),
  'graph.import': async (input) => {
    const result = await s.graph.importGraph(input);
    s.events.emit('graph.changed', { entityIds: [] });
    return result;
  },
});
