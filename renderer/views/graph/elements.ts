// From a graph slice to what cytoscape draws: node sizes from mention counts, edge widths and
// opacities from weights, which labels to show, and the performance settings that keep a map of
// thousands of nodes responsive. Pure, so it is tested without a canvas.
import type { Entity, EntityEdge, EntityKind, GraphSlice } from '../../../shared/api.js';
import { edgeIsHistory } from '../../stores/graph.js';

/** Above this many elements the map trades detail for speed (textures while moving, no labels…). */
export const BIG_GRAPH_ELEMENTS = 1500;
/** Above this many nodes (or on a big map) a full layout is the worker's force layout, not fcose. */
export const FORCE_LAYOUT_NODES = 350;
/** Below this many nodes the layout may be animated (when motion is welcome). */
export const ANIMATE_LAYOUT_NODES = 250;

/** On a big map, how many of the most mentioned carry their name first (where there is room). */
export const MAJOR_NODES = 120;
/** On a big map, names of the other nodes in view appear from this zoom on (and at most this many at once). */
export const ZOOM_LABELS_AT = 1;
export const ZOOM_LABELS_MAX = 250;
/** A name smaller than this on screen is not drawn on a big map: it could not be read. */
export const MIN_LABEL_PX = 9;

export const MIN_NODE = 16;
export const BIG_NODE_SCALE = 0.6;
export const MAX_NODE = 64;
const FIXED_NODE = 40;

export interface NodeData {
  id: string;
  entityId: number;
  label: string;
  kind: EntityKind;
  mentions: number;
  size: number;
  fontSize: number;
  /** The companion's picture (a data: URL), drawn in its node. */
  image?: string;
}

export interface EdgeData {
  id: string;
  source: string;
  target: string;
  relation: string;
  label: string;
  width: number;
  opacity: number;
}

export interface ElementDef<T> {
  group: 'nodes' | 'edges';
  data: T;
  classes?: string;
}

export const nodeKey = (id: number): string => `n${id}`;
export const edgeKey = (id: number): string => `e${id}`;
export const entityIdOf = (key: string): number => Number(key.slice(1));

/** Diameter from mention count: by square root, so one chatty topic does not dwarf the map. */
export function nodeSize(entity: Pick<Entity, 'kind' | 'mentionCount'>, maxMentions: number): number {
  if (entity.kind === 'self' || entity.kind === 'user') return FIXED_NODE;
  const max = Math.max(1, maxMentions);
  const share = Math.sqrt(Math.max(0, entity.mentionCount)) / Math.sqrt(max);
  return Math.round(MIN_NODE + (MAX_NODE - MIN_NODE) * Math.min(1, share));
}

/**
 * Label size grows with the node. Cytoscape hides a label whose on-screen size falls under
 * `min-zoomed-font-size`, so small nodes' names appear as one zooms in and big ones are always read.
 */
export function labelSize(size: number): number {
  return Math.round(9 + (size - MIN_NODE) * 0.16);
}

/** Weight to line: co-mentions thin and faint, named relations firmer; log-scaled against the heaviest. */
export function edgeLook(edge: Pick<EntityEdge, 'relation' | 'weight'>, maxWeight: number): { width: number; opacity: number } {
  const share = Math.log1p(Math.max(0, edge.weight)) / Math.log1p(Math.max(1, maxWeight));
  const s = Math.min(1, Math.max(0, share));
  if (edge.relation === 'co_mention') return { width: round1(0.6 + 1.6 * s), opacity: round2(0.22 + 0.33 * s) };
  return { width: round1(1.4 + 2.2 * s), opacity: round2(0.6 + 0.35 * s) };
}

const round1 = (n: number) => Math.round(n * 10) / 10;
const round2 = (n: number) => Math.round(n * 100) / 100;

export function isBig(slice: Pick<GraphSlice, 'nodes' | 'edges'>): boolean {
  return slice.nodes.length + slice.edges.length > BIG_GRAPH_ELEMENTS;
}

/**
 * How present an entity is on this map: its mention count, or, when it has more connections drawn
 * here than mentions (an imported graph, or relations learned in sleep), that many connections, so
 * a hub no one has named in chat yet still reads as a hub.
 */
export function presenceOf(slice: Pick<GraphSlice, 'nodes' | 'edges'>): (n: Pick<Entity, 'id' | 'mentionCount'>) => number {
  const degree = new Map<number, number>();
  for (const e of slice.edges) {
    if (e.source === e.target) continue;
    degree.set(e.source, (degree.get(e.source) ?? 0) + 1);
    degree.set(e.target, (degree.get(e.target) ?? 0) + 1);
  }
  return (n) => Math.max(n.mentionCount, degree.get(n.id) ?? 0);
}

/**
 * Cytoscape's elements for a slice. Edges whose ends are not both drawn are left out (a slice cut at
 * its border), and so are duplicates. `relationLabel` gives words to a relation; `day` marks the
 * relations that are over by then as history.
 */
export function toElements(
  slice: Pick<GraphSlice, 'nodes' | 'edges'>,
  relationLabel: (relation: string) => string,
  day: string,
  /** The companion's picture, when it has one (Settings → Companion). */
  selfImage: string | null = null,
): { nodes: ElementDef<NodeData>[]; edges: ElementDef<EdgeData>[] } {
  const presence = presenceOf(slice);
  const maxMentions = slice.nodes.reduce((m, n) => (n.kind === 'self' || n.kind === 'user' ? m : Math.max(m, presence(n))), 1);
  const maxWeight = slice.edges.reduce((m, e) => Math.max(m, e.weight), 1);
  const big = isBig(slice);
  const majorFrom = big ? ([...slice.nodes].map(presence).sort((a, b) => b - a)[MAJOR_NODES - 1] ?? 0) : 0;
  const ids = new Set<number>();
  const nodes: ElementDef<NodeData>[] = [];
  let majors = 0;
  for (const n of slice.nodes) {
    if (ids.has(n.id)) continue;
    ids.add(n.id);
    // A big map is dense: smaller dots leave the structure visible (names come with zoom).
    const full = nodeSize({ kind: n.kind, mentionCount: presence(n) }, maxMentions);
    const size = big ? Math.round(full * BIG_NODE_SCALE) : full;
    const major = big && presence(n) >= majorFrom && majors < MAJOR_NODES;
    if (major) majors++;
    nodes.push({
      group: 'nodes',
      data: {
        id: nodeKey(n.id),
        entityId: n.id,
        label: n.name,
        kind: n.kind,
        mentions: n.mentionCount,
        size,
        fontSize: labelSize(full),
        ...(n.kind === 'self' && selfImage ? { image: selfImage } : {}),
      },
      classes: major ? `kind-${n.kind} major` : `kind-${n.kind}`,
    });
  }
  const seen = new Set<number>();
  const edges: ElementDef<EdgeData>[] = [];
  for (const e of slice.edges) {
    if (seen.has(e.id) || !ids.has(e.source) || !ids.has(e.target) || e.source === e.target) continue;
    seen.add(e.id);
    const co = e.relation === 'co_mention';
    const look = edgeLook(e, maxWeight);
    const classes = [co ? 'co' : 'typed', edgeIsHistory(e, day) ? 'history' : ''].filter(Boolean).join(' ');
    edges.push({
      group: 'edges',
      data: {
        id: edgeKey(e.id),
        source: nodeKey(e.source),
        target: nodeKey(e.target),
        relation: e.relation,
        label: co ? '' : relationLabel(e.relation),
        ...look,
      },
      classes,
    });
  }
  return { nodes, edges };
}

export interface Point {
  x: number;
  y: number;
}

/**
 * A first place for every node before the layout has run: remembered positions where known, else
 * beside a placed neighbour, else on a sunflower spiral by importance (the most mentioned in the
 * middle) — so the first paint already looks like a map and not a pile.
 */
export function initialPositions(
  nodes: readonly ElementDef<NodeData>[],
  edges: readonly ElementDef<EdgeData>[],
  known: ReadonlyMap<string, Point>,
): Map<string, Point> {
  const out = new Map<string, Point>();
  for (const n of nodes) {
    const p = known.get(n.data.id);
    if (p) out.set(n.data.id, p);
  }
  const neighbours = new Map<string, string[]>();
  for (const e of edges) {
    (neighbours.get(e.data.source) ?? neighbours.set(e.data.source, []).get(e.data.source)!).push(e.data.target);
    (neighbours.get(e.data.target) ?? neighbours.set(e.data.target, []).get(e.data.target)!).push(e.data.source);
  }
  const rest = nodes.filter((n) => !out.has(n.data.id)).sort((a, b) => b.data.mentions - a.data.mentions);
  const spiral: ElementDef<NodeData>[] = [];
  let i = 0;
  for (const n of rest) {
    const anchor = (neighbours.get(n.data.id) ?? []).map((id) => out.get(id)).find(Boolean);
    if (anchor && known.size) {
      const angle = (i++ * 2.399963) % (Math.PI * 2);
      out.set(n.data.id, { x: anchor.x + Math.cos(angle) * 60, y: anchor.y + Math.sin(angle) * 60 });
    } else {
      spiral.push(n);
    }
  }
  const spacing = 34;
  spiral.forEach((n, k) => {
    const r = spacing * Math.sqrt(k + 0.5);
    const a = k * 2.399963;
    out.set(n.data.id, { x: Math.cos(a) * r, y: Math.sin(a) * r });
  });
  return out;
}

/** How much of the map is new: a full layout when most of it is, a gentle settle otherwise. */
export function layoutPlan(total: number, known: number): 'none' | 'settle' | 'full' {
  if (total === 0) return 'none';
  const fresh = total - known;
  if (fresh === 0) return 'none';
  if (known === 0 || fresh / total > 0.3) return 'full';
  return 'settle';
}

/** A sentence for screen readers: how big the map is and who is most present in it. */
export function mostMentioned(slice: Pick<GraphSlice, 'nodes'>, n = 5): string[] {
  return [...slice.nodes]
    .filter((e) => e.kind !== 'self' && e.kind !== 'user')
    .sort((a, b) => b.mentionCount - a.mentionCount || a.name.localeCompare(b.name))
    .slice(0, n)
    .map((e) => e.name);
}

/** A node that may carry its name on a big map, where it is (model coordinates) and how much it matters (0 first). */
export interface LabelCandidate {
  id: string;
  x: number;
  y: number;
  size: number;
  fontSize: number;
  label: string;
  rank: number;
}

/** Roughly how wide a name is drawn, in font sizes: CJK characters are square, Latin ones narrower. */
export function labelWidthEm(label: string): number {
  let em = 0;
  for (const ch of label) em += /[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]/.test(ch) ? 1 : 0.58;
  return em;
}

/**
 * On a big map, which nodes in view carry their names: by rank (the selected one and the two of us,
 * its neighbours, the most mentioned, then the rest once zoomed in), then by size, each only where
 * its name overlaps none already placed, and none too small to read. Names are drawn under their
 * node (as the stylesheet places them); `view` is the viewport in screen pixels.
 */
export function chooseLabels(
  candidates: readonly LabelCandidate[],
  view: { zoom: number; pan: Point; width: number; height: number },
  max = ZOOM_LABELS_MAX,
): Set<string> {
  const { zoom, pan, width, height } = view;
  const chosen = new Set<string>();
  const order = [...candidates].sort((a, b) => a.rank - b.rank || b.size - a.size || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  // Placed names by grid cell, so each test looks only at its neighbourhood.
  const cell = 96;
  const grid = new Map<number, number[]>();
  const boxes: number[] = [];
  const key = (cx: number, cy: number) => cx * 100_003 + cy;
  for (const c of order) {
    if (chosen.size >= max) break;
    const font = c.fontSize * zoom;
    if (font < MIN_LABEL_PX && c.rank > 0) continue;
    const w = Math.min(140, labelWidthEm(c.label) * c.fontSize) * zoom + 4;
    const h = font * 1.3;
    const sx = c.x * zoom + pan.x;
    const top = (c.y + c.size / 2 + 4) * zoom + pan.y;
    const x1 = sx - w / 2;
    const x2 = sx + w / 2;
    const y2 = top + h;
    if (x2 < 0 || x1 > width || y2 < 0 || top - c.size * zoom > height) continue;
    let free = true;
    const cx1 = Math.floor(x1 / cell);
    const cx2 = Math.floor(x2 / cell);
    const cy1 = Math.floor(top / cell);
    const cy2 = Math.floor(y2 / cell);
    for (let gx = cx1; gx <= cx2 && free; gx++) {
      for (let gy = cy1; gy <= cy2 && free; gy++) {
        for (const b of grid.get(key(gx, gy)) ?? []) {
          if (x1 < boxes[b + 2]! && x2 > boxes[b]! && top < boxes[b + 3]! && y2 > boxes[b + 1]!) {
            free = false;
            break;
          }
        }
      }
    }
    // The selected one and the two of us are named whatever else is there.
    if (!free && c.rank > 0) continue;
    const b = boxes.length;
    boxes.push(x1, top, x2, y2);
    for (let gx = cx1; gx <= cx2; gx++) {
      for (let gy = cy1; gy <= cy2; gy++) {
        const k = key(gx, gy);
        const list = grid.get(k);
        if (list) list.push(b);
        else grid.set(k, [b]);
      }
    }
    chosen.add(c.id);
  }
  return chosen;
}
