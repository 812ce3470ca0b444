// The layout of a big map, off the main thread: the nodes are painted at once from a cheap first
// placement (see initialPositions), a worker runs the force layout (forceLayout.ts), and the canvas
// moves the nodes once when it answers, the edges joining then (GraphCanvas). Where no worker can
// be started, the same layout runs on the main thread after the first paint.
import type { EdgeData, ElementDef, NodeData, Point } from './elements.js';
import { forceLayout, type ForceInput, type ForceOptions } from './forceLayout.js';

export interface LayoutRequest {
  input: ForceInput;
  options: Partial<ForceOptions>;
}

export interface LayoutAnswer {
  x: Float64Array;
  y: Float64Array;
}

/** The nodes in order, and the arrays the force layout reads: start positions, sizes, edges. */
export function forceInputFor(
  nodes: readonly ElementDef<NodeData>[],
  edges: readonly ElementDef<EdgeData>[],
  positions: ReadonlyMap<string, Point>,
): { ids: string[]; input: ForceInput } {
  const ids = nodes.map((n) => n.data.id);
  const index = new Map(ids.map((id, i) => [id, i]));
  const x = new Float64Array(ids.length);
  const y = new Float64Array(ids.length);
  const size = new Float64Array(ids.length);
  nodes.forEach((n, i) => {
    const p = positions.get(n.data.id);
    x[i] = p?.x ?? 0;
    y[i] = p?.y ?? 0;
    size[i] = n.data.size;
  });
  const kept = edges.filter((e) => index.has(e.data.source) && index.has(e.data.target) && e.data.source !== e.data.target);
  const source = new Uint32Array(kept.length);
  const target = new Uint32Array(kept.length);
  const weight = new Float64Array(kept.length);
  kept.forEach((e, k) => {
    source[k] = index.get(e.data.source)!;
    target[k] = index.get(e.data.target)!;
    // A named relation holds its two ends closer than being mentioned together.
    weight[k] = e.data.relation === 'co_mention' ? 1 : 1.5;
  });
  return { ids, input: { x, y, size, source, target, weight } };
}

/** Fewer steps for more nodes (each costs more): about half a second for 2,000 nodes and 10,000 edges. */
export function forceOptionsFor(nodes: number): Partial<ForceOptions> {
  return { iterations: nodes <= 600 ? 250 : nodes <= 1200 ? 160 : 100 };
}

export interface LayoutJob {
  promise: Promise<LayoutAnswer>;
  cancel(): void;
}

/** The layout in a worker; rejects when there is none to be had (the caller then runs it here). */
export function layoutInWorker(request: LayoutRequest): LayoutJob {
  let worker: Worker | null = null;
  const promise = new Promise<LayoutAnswer>((resolve, reject) => {
    if (typeof Worker !== 'function') {
      reject(new Error('no workers here'));
      return;
    }
    try {
      worker = new Worker(new URL('./layout.worker.ts', import.meta.url), { type: 'module', name: 'graph-layout' });
    } catch (err) {
      reject(err);
      return;
    }
    const w = worker;
    w.onmessage = (e: MessageEvent<LayoutAnswer>) => {
      w.terminate();
      resolve(e.data);
    };
    w.onerror = (e) => {
      e.preventDefault();
      w.terminate();
      reject(new Error(e.message || 'the layout worker failed'));
    };
    const { input } = request;
    w.postMessage(request, [input.x.buffer, input.y.buffer, input.size.buffer, input.source.buffer, input.target.buffer, input.weight.buffer]);
  });
  return {
    promise,
    cancel: () => worker?.terminate(),
  };
}

/** The same layout on this thread (no worker): it blocks, so only after the first paint. */
export function layoutHere(request: LayoutRequest): LayoutAnswer {
  forceLayout(request.input, request.options);
  return { x: request.input.x, y: request.input.y };
}
