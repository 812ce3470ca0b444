import { describe, expect, it } from 'vitest';
import type { Entity, EntityEdge } from '../../../shared/api.js';
import {
  BIG_GRAPH_ELEMENTS,
  chooseLabels,
  edgeLook,
  entityIdOf,
  initialPositions,
  isBig,
  labelSize,
  labelWidthEm,
  layoutPlan,
  MAX_NODE,
  MIN_NODE,
  MIN_LABEL_PX,
  mostMentioned,
  nodeKey,
  nodeSize,
  presenceOf,
  toElements,
} from './elements.js';

function entity(id: number, name: string, over: Partial<Entity> = {}): Entity {
  return { id, kind: 'person', name, aliases: [], mentionCount: 1, firstSeen: null, lastSeen: null, status: 'active', mergedInto: null, ...over };
}
function edge(id: number, source: number, target: number, over: Partial<EntityEdge> = {}): EntityEdge {
  return { id, source, target, relation: 'co_mention', weight: 1, validFrom: null, validTo: null, evidenceMemoryIds: [], ...over };
}

describe('drawing a slice', () => {
  it('sizes nodes by mentions, by square root, between fixed bounds; the two fixed entities alike', () => {
    expect(nodeSize({ kind: 'person', mentionCount: 0 }, 100)).toBe(MIN_NODE);
    expect(nodeSize({ kind: 'person', mentionCount: 100 }, 100)).toBe(MAX_NODE);
    expect(nodeSize({ kind: 'person', mentionCount: 25 }, 100)).toBe(Math.round(MIN_NODE + (MAX_NODE - MIN_NODE) * 0.5));
    expect(nodeSize({ kind: 'self', mentionCount: 0 }, 100)).toBe(nodeSize({ kind: 'user', mentionCount: 5000 }, 100));
    expect(labelSize(MAX_NODE)).toBeGreaterThan(labelSize(MIN_NODE));
  });

  it('draws co-mentions thinner and fainter than named relations, heavier ones stronger', () => {
    const co = edgeLook({ relation: 'co_mention', weight: 1 }, 50);
    const coHeavy = edgeLook({ relation: 'co_mention', weight: 50 }, 50);
    const typed = edgeLook({ relation: 'lives_in', weight: 1 }, 50);
    expect(co.width).toBeLessThan(typed.width);
    expect(co.opacity).toBeLessThan(typed.opacity);
    expect(coHeavy.width).toBeGreaterThan(co.width);
    expect(coHeavy.opacity).toBeLessThanOrEqual(1);
  });

  it('builds elements: labels for named relations only, history marked, loose and duplicate edges left out', () => {
    const { nodes, edges } = toElements(
      {
        nodes: [entity(1, 'Anima', { kind: 'self' }), entity(3, 'Ana', { mentionCount: 9 }), entity(4, 'Porto', { kind: 'place' }), entity(3, 'Ana')],
        edges: [edge(10, 3, 4, { relation: 'lives_in', validTo: '2025-06-01T00:00:00.000Z' }), edge(11, 1, 3), edge(11, 1, 3), edge(12, 3, 99), edge(13, 4, 4)],
      },
      (r) => r.replace('_', ' '),
      '2026-01-01',
    );
    expect(nodes.map((n) => n.data.id)).toEqual(['n1', 'n3', 'n4']);
    expect(nodes[1]!.classes).toBe('kind-person');
    expect(edges.map((e) => e.data.id)).toEqual(['e10', 'e11']);
    expect(edges[0]!.data).toMatchObject({ source: 'n3', target: 'n4', label: 'lives in' });
    expect(edges[0]!.classes).toBe('typed history');
    expect(edges[1]!.data.label).toBe('');
    expect(edges[1]!.classes).toBe('co');
    expect(entityIdOf(nodeKey(42))).toBe(42);
  });

  it("draws the companion's picture in its node only", () => {
    const slice = { nodes: [entity(1, 'Mira', { kind: 'self' }), entity(2, 'You', { kind: 'user' }), entity(3, 'Ana')], edges: [] };
    const picture = 'data:image/png;base64,iVBORw0KGgo=';
    const withPicture = toElements(slice, (r) => r, '2026-01-01', picture).nodes;
    expect(withPicture.map((n) => n.data.image)).toEqual([picture, undefined, undefined]);
    expect(withPicture[0]!.data.label).toBe('Mira');
    expect(toElements(slice, (r) => r, '2026-01-01').nodes.every((n) => n.data.image === undefined)).toBe(true);
  });

  it('switches to the cheap drawing above a size', () => {
    const nodes = Array.from({ length: 600 }, (_, i) => entity(i + 1, `E${i}`));
    const edges = Array.from({ length: BIG_GRAPH_ELEMENTS - 600 + 1 }, (_, i) => edge(i + 1, 1, 2));
    expect(isBig({ nodes, edges })).toBe(true);
    expect(isBig({ nodes, edges: edges.slice(1) })).toBe(false);
  });

  it('places nodes before the layout: remembered ones stay, new ones join a neighbour, the rest spiral', () => {
    const { nodes, edges } = toElements(
      { nodes: [entity(1, 'A', { mentionCount: 5 }), entity(2, 'B'), entity(3, 'C', { mentionCount: 9 })], edges: [edge(1, 1, 2)] },
      (r) => r,
      '2026-01-01',
    );
    const known = new Map([['n1', { x: 500, y: 500 }]]);
    const p = initialPositions(nodes, edges, known);
    expect(p.get('n1')).toEqual({ x: 500, y: 500 });
    const b = p.get('n2')!;
    expect(Math.hypot(b.x - 500, b.y - 500)).toBeCloseTo(60);
    // No placed neighbour: on the spiral, the most mentioned nearest its middle.
    expect(p.get('n3')).toBeDefined();
    const fresh = initialPositions(nodes, edges, new Map());
    const r = (id: string) => Math.hypot(fresh.get(id)!.x, fresh.get(id)!.y);
    expect(r('n3')).toBeLessThan(r('n1'));
    expect(r('n1')).toBeLessThan(r('n2'));
  });

  it('lays out in full only when most of the map is new', () => {
    expect(layoutPlan(0, 0)).toBe('none');
    expect(layoutPlan(10, 10)).toBe('none');
    expect(layoutPlan(10, 0)).toBe('full');
    expect(layoutPlan(10, 9)).toBe('settle');
    expect(layoutPlan(10, 5)).toBe('full');
  });

  it('sizes a hub no one has named by its connections on the map, and a chatty one by its mentions', () => {
    const hub = entity(3, 'Hub', { mentionCount: 0 });
    const chatty = entity(4, 'Chatty', { mentionCount: 9 });
    const leaves = [5, 6, 7, 8].map((i) => entity(i, `Leaf ${i}`, { mentionCount: 0 }));
    const slice = { nodes: [hub, chatty, ...leaves], edges: leaves.map((l, i) => edge(10 + i, hub.id, l.id)) };
    const presence = presenceOf(slice);
    expect(presence(hub)).toBe(4);
    expect(presence(chatty)).toBe(9);
    expect(presence(leaves[0]!)).toBe(1);
    const size = new Map(toElements(slice, (r) => r, '2026-01-01').nodes.map((n) => [n.data.entityId, n.data.size]));
    expect(size.get(hub.id)!).toBeGreaterThan(size.get(leaves[0]!.id)!);
    expect(size.get(chatty.id)!).toBeGreaterThan(size.get(hub.id)!);
  });

  it('names the most mentioned for the screen-reader summary, leaving out the two fixed entities', () => {
    const nodes = [
      entity(1, 'Anima', { kind: 'self', mentionCount: 99 }),
      entity(2, 'Ana', { mentionCount: 3 }),
      entity(3, 'Porto', { mentionCount: 7 }),
      entity(4, 'Bo', { mentionCount: 3 }),
    ];
    expect(mostMentioned({ nodes }, 2)).toEqual(['Porto', 'Ana']);
  });

  describe('names on a big map', () => {
    const view = { zoom: 1, pan: { x: 0, y: 0 }, width: 800, height: 600 };
    const cand = (id: string, x: number, y: number, rank: number, over: Partial<{ size: number; fontSize: number; label: string }> = {}) => ({
      id,
      x,
      y,
      rank,
      size: 20,
      fontSize: 12,
      label: `Name ${id}`,
      ...over,
    });

    it('gives the room to what matters most, and never draws two names over each other', () => {
      const chosen = chooseLabels([cand('near', 100, 100, 1), cand('other', 110, 104, 3), cand('apart', 400, 100, 3), cand('major', 104, 98, 2)], view);
      expect([...chosen].sort()).toEqual(['apart', 'near']);
    });

    it('names the selected one and the two of us wherever they are, but only what is in view', () => {
      const chosen = chooseLabels(
        [cand('other', 100, 100, 3, { size: 40 }), cand('you', 104, 100, 0), cand('selected', 100, 104, 0), cand('away', 2000, 100, 3)],
        view,
      );
      expect([...chosen].sort()).toEqual(['selected', 'you']);
    });

    it('leaves out names too small to read at this zoom, and stops at the limit', () => {
      const small = { ...view, zoom: (MIN_LABEL_PX - 1) / 12 };
      expect(chooseLabels([cand('a', 100, 100, 2)], small).size).toBe(0);
      const many = Array.from({ length: 40 }, (_, i) => cand(`n${i}`, 60 + (i % 5) * 150, 40 + Math.floor(i / 5) * 70, 3));
      expect(chooseLabels(many, view).size).toBe(40);
      expect(chooseLabels(many, view, 10).size).toBe(10);
    });

    it('measures Chinese names wider than Latin ones of as many characters', () => {
      expect(labelWidthEm('北京大学')).toBeGreaterThan(labelWidthEm('Ansa'));
    });
  });
});
