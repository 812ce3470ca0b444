// Shared by the formats that store a conversation as a tree of messages with parent links (Open
// WebUI, LibreChat): the main line from the root to a chosen leaf, and the siblings of each node on
// it (other branches at that point), for versions.

export interface TreeNode<T> {
  id: string;
  parent: string | null;
  value: T;
}

export interface Tree<T> {
  nodes: Map<string, TreeNode<T>>;
  children: Map<string | null, string[]>;
}

export function buildTree<T>(items: TreeNode<T>[]): Tree<T> {
  const nodes = new Map(items.map((n) => [n.id, n]));
  const children = new Map<string | null, string[]>();
  for (const n of items) {
    const parent = n.parent !== null && nodes.has(n.parent) ? n.parent : null;
    children.set(parent, [...(children.get(parent) ?? []), n.id]);
  }
  return { nodes, children };
}

/** Root → leaf ids ending at `end`; throws (via onLoop) if the parent links loop. */
export function pathTo<T>(tree: Tree<T>, end: string, onLoop: (id: string) => never): string[] {
  const path: string[] = [];
  const seen = new Set<string>();
  for (let id: string | null = end; id !== null && tree.nodes.has(id); id = tree.nodes.get(id)!.parent) {
    if (seen.has(id)) onLoop(id);
    seen.add(id);
    path.push(id);
  }
  return path.reverse();
}

/** The leaf at the end of the longest branch (ties: the later child), for trees with no "current" marker. */
export function deepestLeaf<T>(tree: Tree<T>): string | null {
  const depth = new Map<string, number>();
  const measure = (id: string, seen: Set<string>): number => {
    if (depth.has(id)) return depth.get(id)!;
    if (seen.has(id)) return 0;
    seen.add(id);
    const d = 1 + Math.max(0, ...(tree.children.get(id) ?? []).map((c) => measure(c, seen)));
    depth.set(id, d);
    return d;
  };
  let at: string | null = null;
  let options = tree.children.get(null) ?? [];
  while (options.length > 0) {
    let best = options[0]!;
    for (const c of options) if (measure(c, new Set()) >= measure(best, new Set())) best = c;
    at = best;
    options = tree.children.get(best) ?? [];
  }
  return at;
}

/** The other children of `id`'s parent (the branches not taken at that point), in their order. */
export function siblingsOf<T>(tree: Tree<T>, id: string): string[] {
  const node = tree.nodes.get(id);
  if (!node) return [];
  const parent = node.parent !== null && tree.nodes.has(node.parent) ? node.parent : null;
  return (tree.children.get(parent) ?? []).filter((c) => c !== id);
}

/** How many nodes are in the subtree under id, itself included. */
export function subtreeSize<T>(tree: Tree<T>, id: string): number {
  let count = 0;
  const stack = [id];
  const seen = new Set<string>();
  while (stack.length > 0) {
    const at = stack.pop()!;
    if (seen.has(at)) continue;
    seen.add(at);
    count++;
    stack.push(...(tree.children.get(at) ?? []));
  }
  return count;
}
