// The map's look, from the theme's CSS variables (styles/graph/map.css defines one calm colour per kind for the
// light and the dark theme), so cytoscape's canvas follows the theme like the rest of the app.
import type { StylesheetJson } from 'cytoscape';
import { ENTITY_KINDS, type EntityKind } from '../../../shared/api.js';

export interface GraphPalette {
  kinds: Record<EntityKind, string>;
  bg: string;
  surface: string;
  text: string;
  text2: string;
  edge: string;
  edgeTyped: string;
  focus: string;
  font: string;
}

/** Reads the palette from the document's computed style (call again after a theme change). */
export function readPalette(el: Element = document.documentElement): GraphPalette {
  const css = getComputedStyle(el);
  const v = (name: string, fallback: string) => css.getPropertyValue(name).trim() || fallback;
  const kinds = Object.fromEntries(ENTITY_KINDS.map((k) => [k, v(`--graph-${k}`, '#888888')])) as Record<EntityKind, string>;
  return {
    kinds,
    bg: v('--bg', '#f7f5f1'),
    surface: v('--surface', '#ffffff'),
    text: v('--text', '#1f1c19'),
    text2: v('--text-2', '#5c564e'),
    edge: v('--graph-edge', '#cbc3b6'),
    edgeTyped: v('--graph-edge-typed', '#8a8278'),
    focus: v('--focus', '#a4461c'),
    font: v('--font-sans', 'system-ui, sans-serif'),
  };
}

/**
 * On a big map, the nodes whose names are drawn: the two of us, what is pointed at or selected, and
 * those the canvas names for the view (`named`: its neighbours, the most mentioned, then the rest
 * once zoomed in, wherever a name has room — see chooseLabels).
 */
export const LABELLED = 'node.kind-self, node.kind-user, node.hover, node.selected, node.named';

/** The stylesheet. `big`: the cheaper drawing for thousands of elements. */
export function graphStyle(p: GraphPalette, big: boolean): StylesheetJson {
  const text = {
    label: 'data(label)',
    'font-family': p.font,
    'font-size': 'data(fontSize)',
    'min-zoomed-font-size': big ? 10 : 8,
    color: p.text,
    'text-valign': 'bottom',
    'text-halign': 'center',
    'text-margin-y': 4,
    'text-outline-color': p.bg,
    'text-outline-width': 2,
    'text-outline-opacity': 0.9,
    'text-max-width': '140px',
    'text-wrap': 'ellipsis',
  };
  const edgeText = {
    label: 'data(label)',
    'font-family': p.font,
    'font-size': 9,
    'min-zoomed-font-size': 7,
    color: p.text2,
    'text-rotation': 'autorotate',
    'text-background-color': p.bg,
    'text-background-opacity': 0.85,
    'text-background-padding': '1px',
  };
  // Plain objects: cytoscape's `data(…)` mappers are strings its typings do not accept everywhere.
  // Every property of every element is applied one by one when the map is first drawn, so on a big
  // map each element carries only what it needs: the text settings only where a name is drawn
  // (see LABELLED, and named relations around the selected one), and edges leave cytoscape's
  // defaults (haystack lines) unsaid.
  const sheet: { selector: string; style: Record<string, unknown> }[] = [
    {
      selector: 'node',
      style: {
        width: 'data(size)',
        height: 'data(size)',
        'background-color': p.kinds.thing,
        'border-width': 1.5,
        'border-color': p.surface,
        'overlay-opacity': 0,
        ...(big ? {} : text),
      },
    },
    ...(big
      ? [
          { selector: LABELLED, style: text },
          // Chosen for the view, readable size included.
          { selector: 'node.named', style: { 'min-zoomed-font-size': 0 } },
        ]
      : []),
    ...ENTITY_KINDS.map((k) => ({ selector: `node.kind-${k}`, style: { 'background-color': p.kinds[k] } })),
    {
      // The companion and the person: rings, so they read as the two ends of every story.
      selector: 'node.kind-self, node.kind-user',
      style: { 'border-width': 4, 'border-color': p.surface, 'font-weight': 600, 'min-zoomed-font-size': 0, 'z-index': 10 },
    },
    { selector: 'node.kind-user', style: { shape: 'round-rectangle' } },
    // The companion's picture, when it has one, fills its node.
    { selector: 'node.kind-self[image]', style: { 'background-image': 'data(image)', 'background-fit': 'cover', 'background-clip': 'node' } },
    {
      // Haystack lines (cytoscape's default curve style, radius 0): the cheapest to draw. Edges take no
      // events, so they need no overlay either.
      selector: 'edge',
      style: {
        width: 'data(width)',
        opacity: 'data(opacity)',
        'line-color': p.edge,
        events: 'no',
      },
    },
    {
      selector: 'edge.typed',
      style: {
        'line-color': p.edgeTyped,
        'curve-style': big ? 'straight' : 'bezier',
        'target-arrow-shape': 'triangle',
        'target-arrow-color': p.edgeTyped,
        'arrow-scale': 0.7,
        'z-index': 2,
        ...(big ? {} : edgeText),
      },
    },
    // On a big map a relation is named only around the selected one.
    ...(big ? [{ selector: 'edge.typed.near', style: edgeText }] : []),
    { selector: 'edge.history', style: { 'line-style': 'dashed', 'line-dash-pattern': [5, 4], opacity: 0.45 } },
    { selector: '.faded', style: { opacity: 0.12, 'text-opacity': 0 } },
    { selector: 'edge.faded', style: { opacity: 0.06 } },
    { selector: 'node.near', style: { 'min-zoomed-font-size': 0 } },
    { selector: 'edge.near', style: { opacity: 0.9, 'min-zoomed-font-size': 0 } },
    {
      selector: 'node.selected',
      style: { 'border-width': 4, 'border-color': p.focus, 'min-zoomed-font-size': 0, 'font-weight': 600, 'z-index': 20 },
    },
    { selector: 'node.hover', style: { 'min-zoomed-font-size': 0, 'z-index': 30 } },
  ];
  return sheet as unknown as StylesheetJson;
}
