// The map itself: cytoscape on a canvas, kept in step with the slice the store holds. Positions are
// remembered for this window's lifetime, so filtering, moving the time slider or an edit elsewhere
// changes what is drawn without shuffling the map; only new nodes are placed (beside a neighbour)
// and the layout runs in full only when most of the map is new. A map of hundreds or thousands of
// nodes is painted at once from a cheap first placement while a worker lays it out (layout.ts);
// smaller ones get fcose, animated when motion is welcome.
import cytoscape, { type Core, type EventObject, type LayoutOptions, type NodeSingular } from 'cytoscape';
import fcose from 'cytoscape-fcose';
import { useEffect, useRef, useState, type KeyboardEvent } from 'react';
import type { GraphSlice } from '../../../shared/api.js';
import type { GraphFocus } from '../../stores/graph.js';
import { useSelf } from '../../stores/self.js';
import {
  ANIMATE_LAYOUT_NODES,
  FORCE_LAYOUT_NODES,
  ZOOM_LABELS_AT,
  chooseLabels,
  entityIdOf,
  initialPositions,
  isBig,
  layoutPlan,
  nodeKey,
  toElements,
  type LabelCandidate,
  type Point,
} from './elements.js';
import { forceInputFor, forceOptionsFor, layoutHere, layoutInWorker, type LayoutAnswer } from './layout.js';
import { graphStyle, readPalette } from './style.js';

cytoscape.use(fcose);

/** Where every node was last seen, for this window's lifetime: the map stays the same map. */
const remembered = new Map<string, Point>();

/** Room around a fitted map for the toolbar above and the time slider below, and how close a fit may come. */
const INSET = { top: 84, bottom: 104, side: 36 };
const MAX_FIT_ZOOM = 1.25;

/**
 * The whole map in the part of the canvas the floating cards leave free, never blown up past reading
 * size. `then` runs once it is there (after the animation, when animated).
 */
function fitMap(cy: Core, animate = false, then?: () => void): void {
  const nodes = cy.nodes();
  if (nodes.empty()) {
    then?.();
    return;
  }
  const bb = nodes.boundingBox({});
  const w = Math.max(1, cy.width() - 2 * INSET.side);
  const h = Math.max(1, cy.height() - INSET.top - INSET.bottom);
  const zoom = Math.max(cy.minZoom(), Math.min(MAX_FIT_ZOOM, w / Math.max(1, bb.w), h / Math.max(1, bb.h)));
  const pan = { x: INSET.side + w / 2 - zoom * (bb.x1 + bb.w / 2), y: INSET.top + h / 2 - zoom * (bb.y1 + bb.h / 2) };
  if (animate) {
    cy.animate({ zoom, pan }, { duration: 300, easing: 'ease-in-out-cubic', complete: then });
  } else {
    cy.viewport({ zoom, pan });
    then?.();
  }
}

/** Classes other effects set (selection, hover, zoom labels): kept when an element's data is refreshed. */
const TRANSIENT = ['faded', 'near', 'selected', 'hover', 'named'];

function withTransient(ele: cytoscape.SingularElementReturnValue, classes: string): string {
  const keep = TRANSIENT.filter((c) => ele.hasClass(c));
  return keep.length ? `${classes} ${keep.join(' ')}` : classes;
}

/** On a big map, the names drawn for what is in view: the ones that matter most, where they have room. */
function updateLabels(cy: Core): void {
  const zoom = cy.zoom();
  const ext = cy.extent();
  const others = zoom >= ZOOM_LABELS_AT;
  const candidates: LabelCandidate[] = [];
  cy.nodes().forEach((node) => {
    const p = node.position();
    // Names hang below their node and reach sideways: a margin around the view.
    if (p.x < ext.x1 - 150 || p.x > ext.x2 + 150 || p.y < ext.y1 - 80 || p.y > ext.y2 + 20) return;
    const rank =
      node.hasClass('selected') || node.hasClass('kind-self') || node.hasClass('kind-user') ? 0 : node.hasClass('near') ? 1 : node.hasClass('major') ? 2 : 3;
    if (rank === 3 && !others) return;
    candidates.push({ id: node.id(), x: p.x, y: p.y, size: node.data('size'), fontSize: node.data('fontSize'), label: node.data('label'), rank });
  });
  const chosen = chooseLabels(candidates, { zoom, pan: cy.pan(), width: cy.width(), height: cy.height() });
  cy.batch(() => {
    cy.nodes('.named').forEach((node) => {
      if (!chosen.has(node.id())) node.removeClass('named');
    });
    for (const id of chosen) {
      const node = cy.getElementById(id);
      if (!node.hasClass('named')) node.addClass('named');
    }
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

/** fcose, for maps of up to FORCE_LAYOUT_NODES (its incremental phase grows much faster than the node count). */
function fcoseOptions(mode: 'full' | 'settle', animate: boolean): LayoutOptions {
  return {
    name: 'fcose',
    quality: mode === 'settle' ? 'proof' : 'default',
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
    nodeSeparation: 75,
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
  /** The theme the stylesheet was made for: restyling thousands of elements is not free. */
  const styledRef = useRef<string | null>(null);
  const themeRef = useRef(theme);
  themeRef.current = theme;
  const layoutRef = useRef<cytoscape.Layouts | null>(null);
  const pendingFocus = useRef<number | null>(null);
  const onSelectRef = useRef(onSelect);
  onSelectRef.current = onSelect;
  const motionRef = useRef(reducedMotion);
  motionRef.current = reducedMotion;
  const selectedRef = useRef(selectedId);
  selectedRef.current = selectedId;
  const [drawn, setDrawn] = useState<Drawn>({ nodes: 0, edges: 0, layout: 'running', seq: 0 });

  /** `then` runs once the view is there (after the animation, when animated). */
  const centreOn = (cy: Core, id: number, then?: () => void) => {
    const node = cy.getElementById(nodeKey(id));
    if (node.empty()) {
      then?.();
      return;
    }
    const zoom = Math.max(cy.zoom(), Math.min(1.2, cy.maxZoom()));
    if (motionRef.current) {
      cy.viewport({ zoom, pan: { x: 0, y: 0 } }).center(node);
      then?.();
    } else {
      cy.animate({ zoom: { level: zoom, position: node.position() }, center: { eles: node } }, { duration: 320, easing: 'ease-in-out-cubic', complete: then });
    }
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
      styledRef.current = themeRef.current;
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
      if (big) {
        let labelTimer: ReturnType<typeof setTimeout> | undefined;
        c.on('viewport', () => {
          clearTimeout(labelTimer);
          labelTimer = setTimeout(() => !c.destroyed() && updateLabels(c), 150);
        });
      }
      c.on('dragfree', 'node', (e: EventObject) => {
        const n = e.target as NodeSingular;
        remembered.set(n.id(), { ...n.position() });
        if (big) updateLabels(c);
      });
    }

    const { nodes, edges } = toElements(slice, relationLabel, day, useSelf.getState().profile?.avatar ?? null);
    // Only positions a finished layout (or a hand) gave count: a layout cut short left a draft.
    const known: ReadonlyMap<string, Point> = remembered;
    const wanted = new Set<string>([...nodes.map((n) => n.data.id), ...edges.map((e) => e.data.id)]);
    const knownCount = nodes.filter((n) => known.has(n.data.id)).length;
    const positions = initialPositions(nodes, edges, known);
    const plan = layoutPlan(nodes.length, knownCount);
    const many = big || nodes.length > FORCE_LAYOUT_NODES;
    // A map laid out in the worker is painted first as its nodes (at their first places); the new
    // edges come with the layout. On the first placement they would only be a tangle, and drawing
    // thousands of them twice is most of the cost of a big map's first paint.
    const deferEdges = plan === 'full' && many;
    const laterEdges: cytoscape.ElementDefinition[] = [];

    layoutRef.current?.stop();
    const c = cy;
    // A new canvas takes everything at once; otherwise each element is looked up and kept, changed or added.
    const empty = c.elements().empty();
    c.batch(() => {
      c.elements().forEach((ele) => {
        if (!wanted.has(ele.id())) c.remove(ele);
      });
      const adds: cytoscape.ElementDefinition[] = [];
      for (const n of nodes) {
        const existing = empty ? null : c.getElementById(n.data.id);
        if (existing?.nonempty()) {
          existing.data(n.data);
          existing.classes(withTransient(existing, n.classes ?? ''));
        } else {
          adds.push({ group: 'nodes', data: n.data, classes: n.classes, position: positions.get(n.data.id) ?? { x: 0, y: 0 } });
        }
      }
      for (const e of edges) {
        const existing = empty ? null : c.getElementById(e.data.id);
        if (existing?.nonempty()) {
          existing.data(e.data);
          existing.classes(withTransient(existing, e.classes ?? ''));
        } else {
          (deferEdges ? laterEdges : adds).push({ group: 'edges', data: e.data, classes: e.classes });
        }
      }
      if (adds.length) c.add(adds);
    });

    const seq = drawnSeq.next();
    const finish = (fit: boolean) => {
      c.nodes().forEach((n) => void remembered.set(n.id(), { ...n.position() }));
      // Done once the map is where it will stay (a fit or a search pick may animate the view), so
      // what is shown then is final.
      const done = () => {
        if (c.destroyed()) return;
        if (big) updateLabels(c);
        setDrawn((d) => (d.seq === seq ? { ...d, nodes: c.nodes().length, edges: c.edges().length, layout: 'done' } : d));
        // A pick made while the view was moving.
        const late = pendingFocus.current;
        pendingFocus.current = null;
        if (late !== null) centreOn(c, late);
      };
      const settled = () => {
        if (c.destroyed()) return;
        const f = pendingFocus.current;
        pendingFocus.current = null;
        if (f !== null) centreOn(c, f, done);
        else done();
      };
      const f0 = pendingFocus.current;
      if (fit) fitMap(c, f0 === null && !motionRef.current && !big, settled);
      else settled();
    };
    setDrawn({ nodes: c.nodes().length, edges: c.edges().length, layout: plan === 'none' ? 'done' : 'running', seq });
    if (plan === 'none') {
      if (fresh) fitMap(c);
      return;
    }
    if (plan === 'settle' && many) {
      // Hundreds or thousands of nodes: the new ones stay beside their neighbours; a re-layout would move everything.
      finish(fresh);
      return;
    }
    if (plan === 'full' && many) {
      // Painted now, from the first placement (a spiral with the most present in the middle, or
      // beside a neighbour); the worker's layout replaces it in one step when it answers, and the
      // edges join then.
      fitMap(c);
      let cancelled = false;
      let frame = 0;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const here = () => new Map(c.nodes().map((n) => [n.id(), { ...n.position() }] as const));
      const { ids, input } = forceInputFor(nodes, edges, here());
      const options = forceOptionsFor(ids.length);
      const apply = (answer: LayoutAnswer) => {
        if (cancelled || c.destroyed()) return;
        c.batch(() => {
          ids.forEach((id, i) => {
            const node = c.getElementById(id);
            if (node.nonempty()) node.position({ x: answer.x[i]!, y: answer.y[i]! });
          });
          if (laterEdges.length) c.add(laterEdges);
        });
        finish(true);
      };
      const job = layoutInWorker({ input, options });
      job.promise.then(apply, () => {
        if (cancelled || c.destroyed()) return;
        // No worker to be had: the same layout here, once the first paint is on screen.
        frame = requestAnimationFrame(() => {
          timer = setTimeout(() => {
            if (!cancelled && !c.destroyed()) apply(layoutHere({ input: forceInputFor(nodes, edges, here()).input, options }));
          }, 0);
        });
      });
      return () => {
        cancelled = true;
        job.cancel();
        cancelAnimationFrame(frame);
        clearTimeout(timer);
      };
    }
    if (plan === 'full' || fresh) fitMap(c);
    const animate = !motionRef.current && nodes.length <= ANIMATE_LAYOUT_NODES;
    const runLayout = () => {
      const layout = c.layout(fcoseOptions(plan, animate));
      layoutRef.current = layout;
      layout.one('layoutstop', () => {
        if (layoutRef.current === layout) layoutRef.current = null;
        if (!c.destroyed()) finish(plan === 'full' || fresh);
      });
      layout.run();
    };
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
  }, [slice, day, relationLabel]);

  // The theme → the stylesheet.
  useEffect(() => {
    const cy = cyRef.current;
    if (!cy || bigRef.current === null || styledRef.current === theme) return;
    styledRef.current = theme;
    cy.style(graphStyle(readPalette(), bigRef.current));
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
    // On a big map the neighbours' names come first.
    if (bigRef.current) updateLabels(cy);
    // drawn.edges: a big map's edges arrive with its layout.
  }, [selectedId, drawn.seq, drawn.edges]);

  // A search pick: centre on it, after the layout if one is running.
  useEffect(() => {
    const cy = cyRef.current;
    if (!focus || !cy) return;
    if (drawn.layout === 'running') pendingFocus.current = focus.id;
    else centreOn(cy, focus.id);
    // A new pick or a new drawing only: the layout settling (drawn.layout) centres a pending pick itself.
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
