// Versions and branches as a tree: every message names the one it follows (`parent_id`). A
// regenerated reply is a sibling of the earlier reply, an edited message a sibling of the original.
// The chosen line — what the model sees, what memory reads — is a path from a root to a leaf, stored
// as `replaced_by IS NULL` on its messages (so every reader that already filters on it stays right);
// every message off the line names in `replaced_by` the message of the line it gave way to.
//
// A message the person deleted (`removed`) is out of the tree: its children follow its parent.
// Pure functions here; conversations.ts reads the rows and writes what changes.

export interface TreeRow {
  id: string;
  parentId: string | null;
  role: 'user' | 'assistant';
  seq: number;
  removed: boolean;
  replacedBy: string | null;
}

export interface Tree {
  byId: Map<string, TreeRow>;
  /** The nearest ancestor that is not removed (null: a root). */
  parentOf(id: string): string | null;
  /** Children (not removed) of a message, or of the root when null, in write order. */
  childrenOf(id: string | null): TreeRow[];
}

export function buildTree(rows: readonly TreeRow[]): Tree {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const parentCache = new Map<string, string | null>();
  const parentOf = (id: string): string | null => {
    const cached = parentCache.get(id);
    if (cached !== undefined) return cached;
    let p = byId.get(id)?.parentId ?? null;
    // A removed message is skipped; the step bound guards a hand-edited database with a loop.
    for (let steps = 0; p !== null && byId.get(p)?.removed && steps <= byId.size; steps++) p = byId.get(p)!.parentId;
    if (p !== null && !byId.has(p)) p = null;
    parentCache.set(id, p);
    return p;
  };
  const children = new Map<string | null, TreeRow[]>();
  for (const r of [...rows].sort((a, b) => a.seq - b.seq)) {
    if (r.removed) continue;
    const p = parentOf(r.id);
    const list = children.get(p);
    if (list) list.push(r);
    else children.set(p, [r]);
  }
  return { byId, parentOf, childrenOf: (id) => children.get(id) ?? [] };
}

/** The newest seq in each message's subtree (itself and everything below it). */
function newestBelow(tree: Tree): Map<string, number> {
  const newest = new Map<string, number>();
  const visit = (row: TreeRow): number => {
    const known = newest.get(row.id);
    if (known !== undefined) return known;
    newest.set(row.id, row.seq); // (guards a hand-edited loop)
    let n = row.seq;
    for (const kid of tree.childrenOf(row.id)) n = Math.max(n, visit(kid));
    newest.set(row.id, n);
    return n;
  };
  for (const row of tree.byId.values()) if (!row.removed) visit(row);
  return newest;
}

/**
 * The line through `target` (null: from the root): its ancestors, itself, then down — at each step
 * the child already on the line, else the one whose branch was written in last (so flipping back to
 * a message finds the conversation that went on from it). Ids from root to leaf.
 */
export function lineThrough(tree: Tree, target: string | null): string[] {
  const newest = newestBelow(tree);
  const up: string[] = [];
  for (let id = target, steps = 0; id !== null && steps <= tree.byId.size; id = tree.parentOf(id), steps++) up.push(id);
  const line = up.reverse();
  const seen = new Set(line);
  let at = target;
  for (;;) {
    const kids = tree.childrenOf(at).filter((k) => !seen.has(k.id));
    if (!kids.length) break;
    const next = kids.find((k) => k.replacedBy === null) ?? kids.reduce((a, b) => (newest.get(b.id)! >= newest.get(a.id)! ? b : a));
    line.push(next.id);
    seen.add(next.id);
    at = next.id;
  }
  return line;
}

/** The last message of the chosen line as stored now (null: nothing on it). */
export function currentLeaf(rows: readonly TreeRow[]): string | null {
  let leaf: TreeRow | null = null;
  for (const r of rows) if (!r.removed && r.replacedBy === null && (!leaf || r.seq > leaf.seq)) leaf = r;
  return leaf?.id ?? null;
}

/**
 * What `replaced_by` each message must hold for `line` to be the chosen line: null on it; off it,
 * the message of the line at the point its branch left the line (its own id when the line has none
 * there, or it is removed). Only the rows that change.
 */
export function lineChanges(tree: Tree, line: readonly string[]): { id: string; replacedBy: string | null }[] {
  const onLine = new Set(line);
  const lineChildOf = new Map<string | null, string>();
  for (const id of line) lineChildOf.set(tree.parentOf(id), id);
  const changes: { id: string; replacedBy: string | null }[] = [];
  for (const r of tree.byId.values()) {
    let want: string | null;
    if (r.removed) want = r.id;
    else if (onLine.has(r.id)) want = null;
    else {
      // Up to the first ancestor (or itself) whose parent is on the line (or is the root).
      let a = r.id;
      for (let steps = 0; steps <= tree.byId.size; steps++) {
        const p = tree.parentOf(a);
        if (p === null || onLine.has(p)) break;
        a = p;
      }
      want = lineChildOf.get(tree.parentOf(a)) ?? r.id;
    }
    if (want !== r.replacedBy) changes.push({ id: r.id, replacedBy: want });
  }
  return changes;
}

/** Per message with other versions (siblings of its own role), every version's id in write order. */
export function versionsOf(tree: Tree, ids: readonly string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const id of ids) {
    const row = tree.byId.get(id);
    if (!row || row.removed) continue;
    const siblings = tree
      .childrenOf(tree.parentOf(id))
      .filter((s) => s.role === row.role)
      .map((s) => s.id);
    if (siblings.length > 1) out.set(id, siblings);
  }
  return out;
}
