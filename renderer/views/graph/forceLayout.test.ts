import { describe, expect, it } from 'vitest';
import type { EdgeData, ElementDef, NodeData } from './elements.js';
import { componentsOf, forceLayout, type ForceInput } from './forceLayout.js';
import { forceInputFor, forceOptionsFor, layoutHere } from './layout.js';

/** Nodes on a small spiral (as initialPositions starts them), all of one size. */
function graph(n: number, pairs: [number, number][], size = 16): ForceInput {
  const x = new Float64Array(n);
  const y = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    const r = 34 * Math.sqrt(k + 0.5);
    x[k] = Math.cos(k * 2.399963) * r;
    y[k] = Math.sin(k * 2.399963) * r;
  }
  return {
    x,
    y,
    size: new Float64Array(n).fill(size),
    source: Uint32Array.from(pairs.map((p) => p[0])),
    target: Uint32Array.from(pairs.map((p) => p[1])),
    weight: new Float64Array(pairs.length).fill(1),
  };
}

const dist = (g: ForceInput, a: number, b: number) => Math.hypot(g.x[a]! - g.x[b]!, g.y[a]! - g.y[b]!);

/** Two groups of `k` nodes, each densely linked inside, and one edge between them. */
function twoGroups(k: number): { n: number; pairs: [number, number][] } {
  const pairs: [number, number][] = [];
  for (const base of [0, k]) for (let i = 0; i < k; i++) for (let j = i + 1; j < k; j++) if ((i * 7 + j) % 3 !== 0) pairs.push([base + i, base + j]);
  pairs.push([0, k]);
  return { n: 2 * k, pairs };
}

describe('the force layout of a big map', () => {
  it('finds the parts of a map', () => {
    const parts = componentsOf(7, Uint32Array.from([0, 1, 4]), Uint32Array.from([1, 2, 5]));
    expect(parts).toEqual([[0, 1, 2], [4, 5], [3], [6]]);
  });

  it('keeps groups together and apart from each other, and the same input gives the same map', () => {
    const { n, pairs } = twoGroups(30);
    const g = graph(n, pairs);
    forceLayout(g, { iterations: 150 });
    expect([...g.x, ...g.y].every(Number.isFinite)).toBe(true);
    const centre = (from: number) => {
      let cx = 0;
      let cy = 0;
      for (let i = from; i < from + 30; i++) {
        cx += g.x[i]!;
        cy += g.y[i]!;
      }
      return { x: cx / 30, y: cy / 30 };
    };
    const a = centre(0);
    const b = centre(30);
    // Every node is nearer its own group's middle than the other's.
    for (let i = 0; i < n; i++) {
      const own = i < 30 ? a : b;
      const other = i < 30 ? b : a;
      expect(Math.hypot(g.x[i]! - own.x, g.y[i]! - own.y)).toBeLessThan(Math.hypot(g.x[i]! - other.x, g.y[i]! - other.y));
    }
    const again = graph(n, pairs);
    forceLayout(again, { iterations: 150 });
    expect([...again.x]).toEqual([...g.x]);
    expect([...again.y]).toEqual([...g.y]);
  });

  it('draws linked things closer than unlinked ones, and no two nodes on top of each other', () => {
    const pairs: [number, number][] = [];
    // A hub with 60 around it, and a ring among those.
    for (let i = 1; i <= 60; i++) pairs.push([0, i], [i, (i % 60) + 1]);
    const g = graph(61, pairs);
    forceLayout(g, { iterations: 200 });
    const linked = pairs.reduce((s, [p, q]) => s + dist(g, p, q), 0) / pairs.length;
    let all = 0;
    let count = 0;
    for (let i = 0; i < 61; i++)
      for (let j = i + 1; j < 61; j++) {
        all += dist(g, i, j);
        count++;
        // Sizes are 16: centres at least a node apart.
        expect(dist(g, i, j), `${i}-${j}`).toBeGreaterThan(14);
      }
    expect(linked).toBeLessThan(all / count);
  });

  it('packs loose parts in rows beneath the main one instead of letting them drift off', () => {
    const { pairs } = twoGroups(20);
    // 40 linked nodes, then 30 on their own and 5 pairs.
    const more: [number, number][] = [...pairs, [70, 71], [72, 73], [74, 75], [76, 77], [78, 79]];
    const g = graph(80, more);
    forceLayout(g, { iterations: 120 });
    let mainBottom = -Infinity;
    let mainWidth = 0;
    const xs = [...g.x.slice(0, 40)];
    for (let i = 0; i < 40; i++) mainBottom = Math.max(mainBottom, g.y[i]!);
    mainWidth = Math.max(...xs) - Math.min(...xs);
    let bottom = -Infinity;
    for (let i = 40; i < 80; i++) {
      // Beneath the main part, close by, and not wider than it.
      expect(g.y[i]!).toBeGreaterThan(mainBottom);
      expect(Math.abs(g.x[i]!)).toBeLessThan(mainWidth);
      bottom = Math.max(bottom, g.y[i]!);
    }
    expect(bottom - mainBottom).toBeLessThan(400);
    // The pairs stay pairs.
    for (let i = 70; i < 80; i += 2) expect(dist(g, i, i + 1)).toBeLessThan(120);
    for (let i = 0; i < 80; i++) for (let j = i + 1; j < 80; j++) expect(dist(g, i, j), `${i}-${j}`).toBeGreaterThan(8);
  });

  it('lays out 2,000 nodes and 10,000 edges', () => {
    let s = 7;
    const rnd = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
    const pairs: [number, number][] = [];
    const seen = new Set<string>();
    while (pairs.length < 10_000) {
      const a = rnd() < 0.5 ? Math.floor(rnd() * 20) : Math.floor(rnd() * 2000);
      const b = Math.floor(rnd() * 2000);
      if (a === b || seen.has(`${Math.min(a, b)}-${Math.max(a, b)}`)) continue;
      seen.add(`${Math.min(a, b)}-${Math.max(a, b)}`);
      pairs.push([a, b]);
    }
    const g = graph(2000, pairs, 14);
    const t = performance.now();
    forceLayout(g, forceOptionsFor(2000));
    console.log(`force layout, 2,000 nodes / 10,000 edges: ${Math.round(performance.now() - t)} ms`);
    expect([...g.x, ...g.y].every(Number.isFinite)).toBe(true);
    // Spread out, not piled up: the middle 90% of nodes spans well more than a screen.
    const xs = [...g.x].sort((p, q) => p - q);
    expect(xs[1900]! - xs[100]!).toBeGreaterThan(800);
  });
});

describe('what the worker is sent', () => {
  const node = (id: string, size: number): ElementDef<NodeData> => ({
    group: 'nodes',
    data: { id, entityId: Number(id.slice(1)), label: id, kind: 'person', mentions: 1, size, fontSize: 10 },
  });
  const edge = (id: string, source: string, target: string, relation: string): ElementDef<EdgeData> => ({
    group: 'edges',
    data: { id, source, target, relation, label: '', width: 1, opacity: 1 },
  });

  it('numbers the nodes, starts them where they are, and pulls named relations harder than co-mentions', () => {
    const nodes = [node('n1', 20), node('n2', 30), node('n3', 10)];
    const edges = [edge('e1', 'n1', 'n2', 'co_mention'), edge('e2', 'n2', 'n3', 'lives_in'), edge('e3', 'n3', 'n9', 'knows')];
    const { ids, input } = forceInputFor(nodes, edges, new Map([['n2', { x: 5, y: -5 }]]));
    expect(ids).toEqual(['n1', 'n2', 'n3']);
    expect([...input.x]).toEqual([0, 5, 0]);
    expect([...input.y]).toEqual([0, -5, 0]);
    expect([...input.size]).toEqual([20, 30, 10]);
    // The edge to a node not drawn is left out.
    expect([...input.source]).toEqual([0, 1]);
    expect([...input.target]).toEqual([1, 2]);
    expect(input.weight[1]).toBeGreaterThan(input.weight[0]!);
    const answer = layoutHere({ input, options: forceOptionsFor(3) });
    expect(answer.x).toHaveLength(3);
    expect([...answer.x, ...answer.y].every(Number.isFinite)).toBe(true);
  });
});
