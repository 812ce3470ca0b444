// The map itself: cytoscape on a canvas, kept in step with the slice the store holds. Positions are
// remembered for this window's lifetime, so filtering, moving the time slider or an edit elsewhere
// changes what is drawn without shuffling the map; only new nodes are placed (beside a neighbour)
// and the layout runs in full only when most of the map is new.
import cytoscape, { type Core, type EventObject, type LayoutOptions, type NodeSingular } from 'cytoscape';
import fcose from 'cytoscape-fcose';
import { useEffect, useRef, useState, type KeyboardEvent } from 'react';
import type { GraphSlice } from '../../../shared/api.js';
import type { GraphFocus } from '../../stores/graph.js';
import {
  ANIMATE_LAYOUT_NODES,
  DRAFT_LAYOUT_NODES,
  ZOOM_LABELS_AT,
  ZOOM_LABELS_MAX,
  entityIdOf,
  initialPositions,
  isBig,
  layoutPlan,
  nodeKey,
  toElements,
  type Point,
} from './elements.js';
import { graphStyle, readPalette } from './style.js';

cytoscape.use(fcose);

/** Where every node was last seen, for this window's lifetime: the map stays the same map. */
const remembered = new Map<string, Point>();

/** Room around a fitted map for the toolbar above and the time slider below, and how close a fit may come. */
const INSET = { top: 84, bottom: 104, side: 36 };
const MAX_FIT_ZOOM = 1.25;

/** The whole map in the part of the canvas the floating cards leave free, never blown up past reading size. */
function fitMap(cy: Core, animate = false): void {
  const nodes = cy.nodes();
  if (nodes.empty()) return;
  const bb = nodes.boundingBox({});
  const w = Math.max(1, cy.width() - 2 * INSET.side);
  const h = Math.max(1, cy.height() - INSET.top - INSET.bottom);
  const zoom = Math.max(cy.minZoom(), Math.min(MAX_FIT_ZOOM, w / Math.max(1, bb.w), h / Math.max(1, bb.h)));
  const pan = { x: INSET.side + w / 2 - zoom * (bb.x1 + bb.w / 2), y: INSET.top + h / 2 - zoom * (bb.y1 + bb.h / 2) };
  if (animate) cy.animate({ zoom, pan }, { duration: 300, easing: 'ease-in-out-cubic' });
  else cy.viewport({ zoom, pan });
}

/** Classes other effects set (selection, hover, zoom labels): kept when an element's data is refreshed. */
const TRANSIENT = ['faded', 'near', 'selected', 'hover', 'zoomed'];

function withTransient(ele: cytoscape.SingularElementReturnValue, classes: string): string {
  const keep = TRANSIENT.filter((c) => ele.hasClass(c));
  return keep.length ? `${classes} ${keep.join(' ')}` : classes;
}

/** On a big map, the names of the nodes in view once zoomed in far enough to read them. */
function updateZoomLabels(cy: Core): void {
  cy.batch(() => {
    cy.nodes('.zoomed').removeClass('zoomed');
    if (cy.zoom() < ZOOM_LABELS_AT) return;
    const ext = cy.extent();
    let n = 0;
    cy.nodes().forEach((node) => {
      if (n >= ZOOM_LABELS_MAX) return false;
      const p = node.position();
      if (p.x >= ext.x1 && p.x <= ext.x2 && p.y >= ext.y1 && p.y <= ext.y2) {
        node.addClass('zoomed');
        n++;
      }
      return true;
    });
  });
}

/** When the panel opens (the map narrows) the selected node must not end up behind it or off screen. */
function keepInView(cy: Core, id: string | null): void {
  if (!id) return;
  const node = cy.getElementById(id);
  if (node.empty()) return;
  const p = node.renderedPosition();
  const margin = 60;
  if (p.x < margin || p.y < margin || p.x > cy.width() - margin || p.y > cy.height() - margin) cy.center(node);
}

export interface CanvasProps {
  slice: GraphSlice;
  /** The day the map shows (YYYY-MM-DD): relations over by then are drawn as history. */
  day: string;
  selectedId: number | null;
  focus: GraphFocus | null;
  reducedMotion: boolean;
  theme: 'light' | 'dark';
  relationLabel: (relation: string) => string;
  label: string;
  describedBy: string;
  onSelect: (id: number | null) => void;
}

type Drawn = { nodes: number; edges: number; layout: 'running' | 'done'; seq: number };

function fcoseOptions(nodes: number, mode: 'full' | 'settle', animate: boolean): LayoutOptions {
  const draft = nodes > DRAFT_LAYOUT_NODES;
  return {
    name: 'fcose',
    // Spectral only for big maps: the incremental phase grows much faster than the node count.
    quality: mode === 'settle' ? 'proof' : draft ? 'draft' : 'default',
    randomize: mode === 'full',
    animate: animate ? 'end' : false,
    animationDuration: 450,
    fit: false,
    nodeDimensionsIncludeLabels: false,
    uniformNodeDimensions: false,
    packComponents: false,
    nodeRepulsion: () => 9000,
    idealEdgeLength: (edge: { hasClass(c: string): boolean }) => (edge.hasClass('co') ? 110 : 85),
    edgeElasticity: (edge: { hasClass(c: string): boolean }) => (edge.hasClass('co') ? 0.3 : 0.45),
    nestingFactor: 0.1,
    // The spectral (draft) phase alone places a big map: room between nodes keeps it readable.
    nodeSeparation: draft ? 220 : 75,
    gravity: 0.3,
    gravityRange: 3.8,
    numIter: mode === 'settle' ? 600 : 2500,
    tile: true,
    tilingPaddingVertical: 14,
    tilingPaddingHorizontal: 14,
  } as unknown as LayoutOptions;
}

export function GraphCanvas(props: CanvasProps) {
  const { slice, day, selectedId, focus, reducedMotion, theme, relationLabel, label, describedBy, onSelect } = props;
  const container = useRef<HTMLDivElement>(null);
  const cyRef = useRef<Core | null>(null);
  const bigRef = useRef<boolean | null>(null);
  const layoutRef = useRef<cytoscape.Layouts | null>(null);
  const pendingFocus = useRef<number | null>(null);
  const onSelectRef = useRef(onSelect);
  onSelectRef.current = onSelect;
  const motionRef = useRef(reducedMotion);
  motionRef.current = reducedMotion;
  const selectedRef = useRef(selectedId);
  selectedRef.current = selectedId;
  const [drawn, setDrawn] = useState<Drawn>({ nodes: 0, edges: 0, layout: 'running', seq: 0 });

  const centreOn = (cy: Core, id: number) => {
    const node = cy.getElementById(nodeKey(id));
    if (node.empty()) return;
    const zoom = Math.max(cy.zoom(), Math.min(1.2, cy.maxZoom()));
    if (motionRef.current) cy.viewport({ zoom, pan: { x: 0, y: 0 } }).center(node);
    else cy.animate({ zoom: { level: zoom, position: node.position() }, center: { eles: node } }, { duration: 320, easing: 'ease-in-out-cubic' });
  };

  // Tear down on leaving the view; positions are kept in `remembered`.
  useEffect(() => {
    // The panel opening or the window changing size: cytoscape only watches the window by itself.
    const el = container.current;
    const observer =
      typeof ResizeObserver === 'function' && el
        ? new ResizeObserver(() => {
            const cy = cyRef.current;
            if (!cy) return;
            cy.resize();
            keepInView(cy, selectedRef.current === null ? null : nodeKey(selectedRef.current));
          })
        : null;
    if (el) observer?.observe(el);
    return () => {
      observer?.disconnect();
      layoutRef.current?.stop();
      const cy = cyRef.current;
      cy?.destroy();
      cyRef.current = null;
      bigRef.current = null;
    };
  }, []);

  // The slice → the canvas.
  useEffect(() => {
    const el = container.current;
    if (!el) return;
    const big = isBig(slice);
    let cy = cyRef.current;
    const fresh = !cy || bigRef.current !== big;
    if (!cy || bigRef.current !== big) {
      // Some settings (pixel ratio, textures) can only be chosen when the instance is made.
      layoutRef.current?.stop();
      cy?.destroy();
      cy = cytoscape({
        container: el,
        style: graphStyle(readPalette(), big),
        minZoom: 0.05,
        maxZoom: 4,
        boxSelectionEnabled: false,
        autoungrabify: false,
        selectionType: 'single',
        textureOnViewport: big,
        hideEdgesOnViewport: big,
        hideLabelsOnViewport: big,
        motionBlur: false,
        pixelRatio: big ? 1 : 'auto',
      });
      cyRef.current = cy;
      bigRef.current = big;
      const c = cy;
      c.on('tap', 'node', (e: EventObject) => onSelectRef.current(entityIdOf((e.target as NodeSingular).id())));
      c.on('tap', (e: EventObject) => {
        if (e.target === c) onSelectRef.current(null);
      });
      c.on('mouseover', 'node', (e: EventObject) => {
        (e.target as NodeSingular).addClass('hover');
        el.style.cursor = 'pointer';
      });
      c.on('mouseout', 'node', (e: EventObject) => {
        (e.target as NodeSingular).removeClass('hover');
        el.style.cursor = '';
      });
      let zoomTimer: ReturnType<typeof setTimeout> | undefined;
      if (big) {
        c.on('viewport', () => {
          clearTimeout(zoomTimer);
          zoomTimer = setTimeout(() => !c.destroyed() && updateZoomLabels(c), 150);
        });
      }
      c.on('dragfree', 'node', (e: EventObject) => {
        const n = e.target as NodeSingular;
        remembered.set(n.id(), { ...n.position() });
      });
    }

    const { nodes, edges } = toElements(slice, relationLabel, day);
    // Only positions a finished layout (or a hand) gave count: a layout cut short left a draft.
    const known: ReadonlyMap<string, Point> = remembered;
    const wanted = new Set<string>([...nodes.map((n) => n.data.id), ...edges.map((e) => e.data.id)]);
    const knownCount = nodes.filter((n) => known.has(n.data.id)).length;
    const positions = initialPositions(nodes, edges, known);

    layoutRef.current?.stop();
    const c = cy;
    c.batch(() => {
      c.elements().forEach((ele) => {
        if (!wanted.has(ele.id())) c.remove(ele);
      });
      const adds: cytoscape.ElementDefinition[] = [];
      for (const n of nodes) {
        const existing = c.getElementById(n.data.id);
        if (existing.nonempty()) {
          existing.data(n.data);
          existing.classes(withTransient(existing, n.classes ?? ''));
        } else {
          adds.push({ group: 'nodes', data: n.data, classes: n.classes, position: positions.get(n.data.id) ?? { x: 0, y: 0 } });
        }
      }
      for (const e of edges) {
        const existing = c.getElementById(e.data.id);
        if (existing.nonempty()) {
          existing.data(e.data);
          existing.classes(withTransient(existing, e.classes ?? ''));
        } else {
          adds.push({ group: 'edges', data: e.data, classes: e.classes });
        }
      }
      if (adds.length) c.add(adds);
    });

    const plan = layoutPlan(nodes.length, knownCount);
    const seq = drawnSeq.next();
    const finish = (fit: boolean) => {
      c.nodes().forEach((n) => void remembered.set(n.id(), { ...n.position() }));
      const f0 = pendingFocus.current;
      if (fit) fitMap(c, f0 === null && !motionRef.current && !big);
      setDrawn((d) => (d.seq === seq ? { ...d, layout: 'done' } : d));
      const f = pendingFocus.current;
      pendingFocus.current = null;
      if (f !== null) centreOn(c, f);
    };
    setDrawn({ nodes: c.nodes().length, edges: c.edges().length, layout: plan === 'none' ? 'done' : 'running', seq });
    if (plan === 'none') {
      if (fresh) fitMap(c);
      return;
    }
    if (plan === 'settle' && big) {
      // Thousands of nodes: the new ones stay beside their neighbours; a re-layout would move everything.
      finish(fresh);
      return;
    }
    if ((plan === 'full' || fresh) && !big) fitMap(c);
    const animate = !motionRef.current && nodes.length <= ANIMATE_LAYOUT_NODES;
    const runLayout = () => {
      const layout = c.layout(fcoseOptions(nodes.length, plan, animate));
      layoutRef.current = layout;
      layout.one('layoutstop', () => {
        if (layoutRef.current === layout) layoutRef.current = null;
        if (!c.destroyed()) finish(plan === 'full' || fresh);
      });
      layout.run();
    };
    if (big) {
      // A big map: every frame is expensive, so it is laid out before its first one rather than
      // painted twice (a draft, then the map).
      runLayout();
      return;
    }
    let cancelled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    // Let the first paint happen (a spiral already shaped like a map) before the layout takes the thread.
    const frame = requestAnimationFrame(() => {
      timer = setTimeout(() => {
        if (!cancelled && !c.destroyed()) runLayout();
      }, 0);
    });
    return () => {
      cancelled = true;
      cancelAnimationFrame(frame);
      clearTimeout(timer);
    };
    // relationLabel changes with the language; day with the time slider.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [slice, day, relationLabel]);

  // The theme → the stylesheet.
  useEffect(() => {
    const cy = cyRef.current;
    if (cy && bigRef.current !== null) cy.style(graphStyle(readPalette(), bigRef.current));
  }, [theme]);

  // The selected entity and its neighbourhood stand out; the rest steps back.
  useEffect(() => {
    const cy = cyRef.current;
    if (!cy) return;
    cy.batch(() => {
      cy.elements('.faded, .near, .selected').removeClass('faded near selected');
      if (selectedId === null) return;
      const node = cy.getElementById(nodeKey(selectedId));
      if (node.empty()) return;
      const hood = node.closedNeighborhood();
      node.addClass('selected');
      hood.addClass('near');
      // Fading the rest restyles every element: on a big map the neighbourhood only stands out.
      if (!bigRef.current) cy.elements().not(hood).addClass('faded');
    });
  }, [selectedId, drawn.seq]);

  // A search pick: centre on it, after the layout if one is running.
  useEffect(() => {
    const cy = cyRef.current;
    if (!focus || !cy) return;
    if (drawn.layout === 'running') pendingFocus.current = focus.id;
    else centreOn(cy, focus.id);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [focus?.seq, drawn.seq]);

  const onKey = (e: KeyboardEvent<HTMLDivElement>) => {
    const cy = cyRef.current;
    if (!cy || e.altKey || e.ctrlKey || e.metaKey) return;
    const step = 80;
    const moves: Record<string, [number, number]> = { ArrowLeft: [step, 0], ArrowRight: [-step, 0], ArrowUp: [0, step], ArrowDown: [0, -step] };
    const centre = { x: cy.width() / 2, y: cy.height() / 2 };
    if (moves[e.key]) {
      cy.panBy({ x: moves[e.key]![0], y: moves[e.key]![1] });
    } else if (e.key === '+' || e.key === '=') {
      cy.zoom({ level: Math.min(cy.maxZoom(), cy.zoom() * 1.25), renderedPosition: centre });
    } else if (e.key === '-' || e.key === '_') {
      cy.zoom({ level: Math.max(cy.minZoom(), cy.zoom() / 1.25), renderedPosition: centre });
    } else if (e.key === '0') {
      fitMap(cy);
    } else {
      return;
    }
    e.preventDefault();
  };

  return (
    <div
      ref={container}
      className="graph-canvas"
      data-testid="graph-canvas"
      data-nodes={drawn.seq ? drawn.nodes : undefined}
      data-edges={drawn.seq ? drawn.edges : undefined}
      data-layout={drawn.layout}
      data-big={bigRef.current ?? undefined}
      role="application"
      aria-roledescription="map"
      aria-label={label}
      aria-describedby={describedBy}
      tabIndex={0}
      onKeyDown={onKey}
    />
  );
}

const drawnSeq = (() => {
  let n = 0;
  return { next: () => ++n };
})();
