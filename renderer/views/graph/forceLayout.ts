// A force-directed layout for big maps, on plain typed arrays: ForceAtlas2 (Jacomy et al., 2014) with
// Barnes–Hut repulsion, so one step costs O(n log n + m) instead of cytoscape-fcose's per-element
// collection work (its draft took seconds for 2,000 nodes, its full quality minutes). Hubs repel by
// their degree, so the many things around one person get room instead of a pile; the last steps
// keep nodes from overlapping. Pure and deterministic (the same map comes out the same), so it runs
// in a worker, on the main thread as a fallback, and in unit tests alike.

export interface ForceInput {
  /** Start positions (changed in place) and diameters, one per node. */
  x: Float64Array;
  y: Float64Array;
  size: Float64Array;
  /** Edges as node indexes; weight scales the pull (1 for a plain edge). */
  source: Uint32Array;
  target: Uint32Array;
  weight: Float64Array;
}

export interface ForceOptions {
  iterations: number;
  /** How far apart things settle: the repulsion's strength (FA2's scaling ratio). */
  scaling: number;
  /** The pull to the centre that keeps loose parts from drifting off. */
  gravity: number;
  /** Barnes–Hut: a group of nodes acts as one when it looks smaller than this from afar. */
  theta: number;
  /** The share of the last iterations that also push overlapping nodes apart. */
  overlapShare: number;
  /** Extra room around each node when pushing overlaps apart. */
  margin: number;
}

export const FORCE_DEFAULTS: ForceOptions = { iterations: 300, scaling: 12, gravity: 1, theta: 1.2, overlapShare: 0.25, margin: 4 };

/** A quadtree over the nodes, in flat arrays: each cell's mass, centre of mass and four children. */
class QuadTree {
  // Cell fields: bounds (x0, y0, side), mass, centre of mass (summed mass-weighted while building),
  // first of four children (-1: a leaf), the one node in a leaf (-1: none).
  x0: Float64Array;
  y0: Float64Array;
  side: Float64Array;
  mass: Float64Array;
  mx: Float64Array;
  my: Float64Array;
  child: Int32Array;
  node: Int32Array;
  count = 0;

  constructor(capacity: number) {
    this.x0 = new Float64Array(capacity);
    this.y0 = new Float64Array(capacity);
    this.side = new Float64Array(capacity);
    this.mass = new Float64Array(capacity);
    this.mx = new Float64Array(capacity);
    this.my = new Float64Array(capacity);
    this.child = new Int32Array(capacity);
    this.node = new Int32Array(capacity);
  }

  private cell(x0: number, y0: number, side: number): number {
    if (this.count === this.x0.length) this.grow();
    const c = this.count++;
    this.x0[c] = x0;
    this.y0[c] = y0;
    this.side[c] = side;
    this.mass[c] = 0;
    this.mx[c] = 0;
    this.my[c] = 0;
    this.child[c] = -1;
    this.node[c] = -1;
    return c;
  }

  private grow(): void {
    const n = this.x0.length * 2;
    const f = (a: Float64Array) => {
      const b = new Float64Array(n);
      b.set(a);
      return b;
    };
    const i = (a: Int32Array) => {
      const b = new Int32Array(n);
      b.set(a);
      return b;
    };
    this.x0 = f(this.x0);
    this.y0 = f(this.y0);
    this.side = f(this.side);
    this.mass = f(this.mass);
    this.mx = f(this.mx);
    this.my = f(this.my);
    this.child = i(this.child);
    this.node = i(this.node);
  }

  build(x: Float64Array, y: Float64Array, m: Float64Array): void {
    const n = x.length;
    let minX = Infinity;
    let minY = Infinity;
    let maxX = -Infinity;
    let maxY = -Infinity;
    for (let i = 0; i < n; i++) {
      if (x[i]! < minX) minX = x[i]!;
      if (y[i]! < minY) minY = y[i]!;
      if (x[i]! > maxX) maxX = x[i]!;
      if (y[i]! > maxY) maxY = y[i]!;
    }
    const side = Math.max(maxX - minX, maxY - minY, 1) * 1.0001;
    this.count = 0;
    this.cell(minX, minY, side);
    for (let i = 0; i < n; i++) this.insert(i, x[i]!, y[i]!, m[i]!, x, y, m);
    // From mass-weighted sums to centres of mass, once, rather than at every look.
    for (let c = 0; c < this.count; c++) {
      const cm = this.mass[c]!;
      if (cm > 0) {
        this.mx[c]! /= cm;
        this.my[c]! /= cm;
      }
    }
  }

  private insert(i: number, px: number, py: number, pm: number, x: Float64Array, y: Float64Array, m: Float64Array): void {
    let c = 0;
    for (let depth = 0; ; depth++) {
      // Every cell on the way down carries the new node's mass.
      this.mass[c]! += pm;
      this.mx[c]! += px * pm;
      this.my[c]! += py * pm;
      if (this.child[c] === -1) {
        if (this.node[c] === -1 && this.mass[c] === pm) {
          this.node[c] = i;
          return;
        }
        // Two nodes at (nearly) one spot: past this depth they share the cell, as one mass.
        if (depth > 40) return;
        // A leaf with a node: split it and push that node down first.
        const h = this.side[c]! / 2;
        const first = this.count;
        this.cell(this.x0[c]!, this.y0[c]!, h);
        this.cell(this.x0[c]! + h, this.y0[c]!, h);
        this.cell(this.x0[c]!, this.y0[c]! + h, h);
        this.cell(this.x0[c]! + h, this.y0[c]! + h, h);
        this.child[c] = first;
        const old = this.node[c]!;
        this.node[c] = -1;
        if (old !== -1) {
          const q = this.quadrant(c, x[old]!, y[old]!);
          const oc = first + q;
          this.mass[oc] = m[old]!;
          this.mx[oc] = x[old]! * m[old]!;
          this.my[oc] = y[old]! * m[old]!;
          this.node[oc] = old;
        }
      }
      c = this.child[c]! + this.quadrant(c, px, py);
    }
  }

  private quadrant(c: number, px: number, py: number): number {
    const h = this.side[c]! / 2;
    return (px >= this.x0[c]! + h ? 1 : 0) + (py >= this.y0[c]! + h ? 2 : 0);
  }
}

/**
 * Repulsion through the quadtree: kr · m1 · m2 / d between every node and each far group as one. With
 * `radius` (the last steps), near nodes repel by the gap between their rims, overlapping ones hard.
 */
function repel(
  tree: QuadTree,
  x: Float64Array,
  y: Float64Array,
  mass: Float64Array,
  radius: Float64Array | null,
  fx: Float64Array,
  fy: Float64Array,
  kr: number,
  theta2: number,
  stack: Int32Array,
): void {
  const { mass: tMass, mx: tMx, my: tMy, side: tSide, child: tChild, node: tNode } = tree;
  for (let i = 0; i < x.length; i++) {
    const xi = x[i]!;
    const yi = y[i]!;
    const k = kr * mass[i]!;
    let sp = 0;
    stack[sp++] = 0;
    while (sp > 0) {
      const c = stack[--sp]!;
      const cm = tMass[c]!;
      if (cm === 0) continue;
      const leaf = tChild[c] === -1;
      const j = tNode[c]!;
      if (leaf && j === i) continue;
      const dx = xi - tMx[c]!;
      const dy = yi - tMy[c]!;
      const d2 = dx * dx + dy * dy;
      const s = tSide[c]!;
      if (radius && leaf && j !== -1) {
        const d = Math.sqrt(d2);
        const gap = d - radius[i]! - radius[j]!;
        const f = gap > 0 ? (k * cm) / (gap * gap) : d > 0 ? (100 * k * cm) / d : 0;
        fx[i]! += dx * f;
        fy[i]! += dy * f;
      } else if (leaf || s * s < theta2 * d2) {
        if (d2 > 0) {
          const f = (k * cm) / d2;
          fx[i]! += dx * f;
          fy[i]! += dy * f;
        }
      } else if (sp + 4 <= stack.length) {
        const first = tChild[c]!;
        stack[sp++] = first;
        stack[sp++] = first + 1;
        stack[sp++] = first + 2;
        stack[sp++] = first + 3;
      }
    }
  }
}

/** Gravity toward the centre: g · mass, whatever the distance. */
function gravitate(x: Float64Array, y: Float64Array, mass: Float64Array, fx: Float64Array, fy: Float64Array, g: number): void {
  for (let i = 0; i < x.length; i++) {
    const d = Math.sqrt(x[i]! * x[i]! + y[i]! * y[i]!);
    if (d > 0) {
      const f = (g * mass[i]!) / d;
      fx[i]! -= x[i]! * f;
      fy[i]! -= y[i]! * f;
    }
  }
}

/** Attraction along the edges: linear in the distance (between rims, with `radius`), times the edge's weight. */
function attract(input: ForceInput, fx: Float64Array, fy: Float64Array, radius: Float64Array | null): void {
  const { x, y, source, target, weight } = input;
  for (let e = 0; e < source.length; e++) {
    const a = source[e]!;
    const b = target[e]!;
    let dx = x[a]! - x[b]!;
    let dy = y[a]! - y[b]!;
    let f = -weight[e]!;
    if (radius) {
      const d = Math.sqrt(dx * dx + dy * dy);
      const gap = d - radius[a]! - radius[b]!;
      if (gap <= 0) continue;
      f *= gap / d;
    }
    dx *= f;
    dy *= f;
    fx[a]! += dx;
    fy[a]! += dy;
    fx[b]! -= dx;
    fy[b]! -= dy;
  }
}

/** ForceAtlas2 on one connected graph, in place. */
function forceAtlas2(input: ForceInput, o: ForceOptions): void {
  const { x, y, size, source, target } = input;
  const n = x.length;
  const m = source.length;
  if (n < 2) return;

  // FA2's mass: 1 + degree.
  const mass = new Float64Array(n).fill(1);
  for (let e = 0; e < m; e++) {
    mass[source[e]!]! += 1;
    mass[target[e]!]! += 1;
  }
  const radius = new Float64Array(n);
  for (let i = 0; i < n; i++) radius[i] = size[i]! / 2 + o.margin;
  // Two nodes on one spot would feel the same forces and never part: a nudge under a pixel, by index.
  for (let i = 0; i < n; i++) {
    x[i]! += ((i * 7919) % 997) / 997 - 0.5;
    y[i]! += ((i * 6271) % 991) / 991 - 0.5;
  }

  let fx = new Float64Array(n);
  let fy = new Float64Array(n);
  let oldFx = new Float64Array(n);
  let oldFy = new Float64Array(n);
  const tree = new QuadTree(Math.max(64, n * 4));
  const stack = new Int32Array(4096);
  let speed = 1;
  let speedEfficiency = 1;
  const overlapFrom = Math.round(o.iterations * (1 - o.overlapShare));
  const theta2 = o.theta * o.theta;

  for (let iter = 0; iter < o.iterations; iter++) {
    // Each step's forces, and the last step's to compare with.
    [oldFx, fx] = [fx, oldFx];
    [oldFy, fy] = [fy, oldFy];
    fx.fill(0);
    fy.fill(0);
    // The last steps also keep nodes from overlapping.
    const adjust = iter >= overlapFrom;
    tree.build(x, y, mass);
    repel(tree, x, y, mass, adjust ? radius : null, fx, fy, o.scaling, theta2, stack);
    gravitate(x, y, mass, fx, fy, o.gravity);
    attract(input, fx, fy, adjust ? radius : null);
    [speed, speedEfficiency] = move(x, y, mass, fx, fy, oldFx, oldFy, speed, speedEfficiency, adjust);
  }
}

/**
 * FA2's adaptive speed: fast while nodes move steadily, slower where they swing back and forth; then
 * every node moves by its force at its own speed. Returns the new speed and efficiency.
 */
function move(
  x: Float64Array,
  y: Float64Array,
  mass: Float64Array,
  fx: Float64Array,
  fy: Float64Array,
  oldFx: Float64Array,
  oldFy: Float64Array,
  speed: number,
  speedEfficiency: number,
  adjust: boolean,
): [number, number] {
  const n = x.length;
  let swinging = 0;
  let traction = 0;
  for (let i = 0; i < n; i++) {
    const sx = oldFx[i]! - fx[i]!;
    const sy = oldFy[i]! - fy[i]!;
    const tx = oldFx[i]! + fx[i]!;
    const ty = oldFy[i]! + fy[i]!;
    swinging += mass[i]! * Math.sqrt(sx * sx + sy * sy);
    traction += 0.5 * mass[i]! * Math.sqrt(tx * tx + ty * ty);
  }
  const estimatedJitter = 0.05 * Math.sqrt(n);
  const minJitter = Math.sqrt(estimatedJitter);
  let jitter = Math.max(minJitter, Math.min(10, (estimatedJitter * traction) / (n * n)));
  const minEfficiency = 0.05;
  if (traction > 0 && swinging / traction > 2) {
    if (speedEfficiency > minEfficiency) speedEfficiency *= 0.5;
    jitter = Math.max(jitter, 1);
  }
  const targetSpeed = swinging > 0 ? (jitter * speedEfficiency * traction) / swinging : speed;
  if (swinging > jitter * traction) {
    if (speedEfficiency > minEfficiency) speedEfficiency *= 0.7;
  } else if (speed < 1000) {
    speedEfficiency *= 1.3;
  }
  speed += Math.min(targetSpeed - speed, 0.5 * speed);

  for (let i = 0; i < n; i++) {
    const sx = oldFx[i]! - fx[i]!;
    const sy = oldFy[i]! - fy[i]!;
    const swing = mass[i]! * Math.sqrt(sx * sx + sy * sy);
    let factor = speed / (1 + Math.sqrt(speed * swing));
    if (adjust) {
      const df = Math.sqrt(fx[i]! * fx[i]! + fy[i]! * fy[i]!);
      factor = df > 0 ? Math.min(0.1 * factor * df, 10) / df : 0;
    }
    x[i]! += fx[i]! * factor;
    y[i]! += fy[i]! * factor;
  }
  return [speed, speedEfficiency];
}

/** Connected components, biggest first: each a list of node indexes. */
export function componentsOf(n: number, source: Uint32Array, target: Uint32Array): number[][] {
  const parent = new Int32Array(n);
  for (let i = 0; i < n; i++) parent[i] = i;
  const find = (i: number): number => {
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]!]!;
      i = parent[i]!;
    }
    return i;
  };
  for (let e = 0; e < source.length; e++) {
    const a = find(source[e]!);
    const b = find(target[e]!);
    if (a !== b) parent[a < b ? b : a] = a < b ? a : b;
  }
  const groups = new Map<number, number[]>();
  for (let i = 0; i < n; i++) {
    const r = find(i);
    const g = groups.get(r);
    if (g) g.push(i);
    else groups.set(r, [i]);
  }
  return [...groups.values()].sort((a, b) => b.length - a.length || a[0]! - b[0]!);
}

/**
 * Lays the nodes out in place (x, y). Each connected part is laid out on its own (the whole map
 * would push a loose part far away), then the parts are packed: the biggest in the middle, the
 * others in rows beneath it, biggest first. Starting positions matter: the caller's first
 * placement (hubs in the middle, the rest around them) is the seed, so one map comes out the same.
 */
export function forceLayout(input: ForceInput, options: Partial<ForceOptions> = {}): void {
  const o = { ...FORCE_DEFAULTS, ...options };
  const { x, y, size, source, target, weight } = input;
  const n = x.length;
  if (n === 0) return;
  const parts = componentsOf(n, source, target);
  // Each part's edges, by the part's own node numbering.
  const partOf = new Int32Array(n);
  const local = new Int32Array(n);
  parts.forEach((p, k) =>
    p.forEach((node, i) => {
      partOf[node] = k;
      local[node] = i;
    }),
  );
  const edgeCount = new Int32Array(parts.length);
  for (let e = 0; e < source.length; e++) edgeCount[partOf[source[e]!]!]!++;
  const edgesOf = parts.map((_, k) => ({ s: new Uint32Array(edgeCount[k]!), t: new Uint32Array(edgeCount[k]!), w: new Float64Array(edgeCount[k]!), n: 0 }));
  for (let e = 0; e < source.length; e++) {
    const pe = edgesOf[partOf[source[e]!]!]!;
    pe.s[pe.n] = local[source[e]!]!;
    pe.t[pe.n] = local[target[e]!]!;
    pe.w[pe.n] = weight[e]!;
    pe.n++;
  }

  const laid = parts.map((p, k) => {
    const px = Float64Array.from(p, (i) => x[i]!);
    const py = Float64Array.from(p, (i) => y[i]!);
    const ps = Float64Array.from(p, (i) => size[i]!);
    if (p.length > 1) forceAtlas2({ x: px, y: py, size: ps, source: edgesOf[k]!.s, target: edgesOf[k]!.t, weight: edgesOf[k]!.w }, o);
    // Its own box, with room around each node.
    let x1 = Infinity;
    let y1 = Infinity;
    let x2 = -Infinity;
    let y2 = -Infinity;
    for (let i = 0; i < p.length; i++) {
      const r = ps[i]! / 2 + o.margin;
      x1 = Math.min(x1, px[i]! - r);
      y1 = Math.min(y1, py[i]! - r);
      x2 = Math.max(x2, px[i]! + r);
      y2 = Math.max(y2, py[i]! + r);
    }
    return { nodes: p, px, py, x1, y1, w: x2 - x1, h: y2 - y1 };
  });

  // The biggest part where it is, centred; the others in rows beneath it, biggest first, each row
  // about as wide as the main part (wider when the loose ones would otherwise make a tall column).
  const gap = 24;
  const [main, ...rest] = laid;
  if (!main) return;
  const area = rest.reduce((a, r) => a + (r.w + gap) * (r.h + gap), 0);
  const rowWidth = rest.reduce((w, r) => Math.max(w, r.w), Math.max(main.w, Math.sqrt(area) * 1.6));
  const place = (part: (typeof laid)[number], left: number, top: number) =>
    part.nodes.forEach((node, i) => {
      x[node] = part.px[i]! - part.x1 + left;
      y[node] = part.py[i]! - part.y1 + top;
    });
  place(main, -main.w / 2, -main.h / 2);
  let top = main.h / 2 + gap * 2;
  let row: typeof laid = [];
  let rowW = 0;
  const flush = () => {
    let left = -rowW / 2;
    let rowH = 0;
    for (const part of row) {
      place(part, left, top);
      left += part.w + gap;
      rowH = Math.max(rowH, part.h);
    }
    top += rowH + gap;
    row = [];
    rowW = 0;
  };
  for (const part of rest) {
    if (row.length && rowW + gap + part.w > rowWidth) flush();
    rowW += (row.length ? gap : 0) + part.w;
    row.push(part);
  }
  if (row.length) flush();
}
