// The graph through the host API: what the Graph view asks for and changes, on a real PGlite.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../host/types.js';
import { startTestHost } from '../testing/host.js';
import { PATIENCE_MS } from '../testing/patience.js';

let host: Host;

async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = PATIENCE_MS): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > until) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  host = await startTestHost();
});
afterAll(() => host.close());

describe('graph API', () => {
  it('imports entities and relations through resolution, and draws the whole graph, or the graph as it was on a date', async () => {
    const result = await host.api['graph.import']({
      entities: [
        { name: 'Ana', kind: 'person', aliases: ['Ana Sousa'] },
        { name: 'Porto', kind: 'place' },
        { name: 'Lisbon', kind: 'place' },
        { name: 'ana', kind: 'person' }, // the same person again: resolved, not copied
      ],
      edges: [
        { source: 0, target: 1, relation: 'lives_in', validFrom: '2020-01-01', validTo: '2025-06-01' },
        { source: 3, target: 2, relation: 'lives_in', validFrom: '2025-06-01' },
      ],
    });
    expect(result).toEqual({ entities: 3, edges: 2 });

    const now = await host.api['graph.view']({});
    expect(now.mode).toBe('whole');
    const byName = new Map(now.nodes.map((n) => [n.name, n.id]));
    expect([...byName.keys()]).toEqual(expect.arrayContaining(['Ana', 'Porto', 'Lisbon']));
    const livesIn = (slice: typeof now) => slice.edges.filter((e) => e.relation === 'lives_in').map((e) => [e.source, e.target]);
    expect(livesIn(now)).toEqual([[byName.get('Ana'), byName.get('Lisbon')]]);
    // In 2023 she lived in Porto: the closed edge is history, shown on the time slider.
    expect(livesIn(await host.api['graph.view']({ at: '2023-03-01' }))).toEqual([[byName.get('Ana'), byName.get('Porto')]]);
    expect((await host.api['graph.search']({ query: 'Ana Sousa' }))[0]).toMatchObject({ name: 'Ana' });
  });

  it('refuses an import edge to an entity that is not in it, and changes nothing', async () => {
    const before = (await host.api['graph.view']({})).totalEntities;
    await expect(
      host.api['graph.import']({ entities: [{ name: 'Rui', kind: 'person' }], edges: [{ source: 0, target: 5, relation: 'knows' }] }),
    ).rejects.toMatchObject({ code: 'not_found' });
    expect((await host.api['graph.view']({})).totalEntities).toBe(before);
  });

  it('a saved memory grows the graph, and the entity panel lists it as a fact with its relations', async () => {
    const saved = await host.api['memories.create']({ type: 'world', content: 'Ana works at Nimbus Labs in Lisbon.' });
    const ana = (await host.api['graph.search']({ query: 'Ana' }))[0]!;
    const detail = await eventually(
      () => host.api['graph.entity']({ id: ana.id }),
      (d) => d.facts.some((m) => m.id === saved.memory.id),
    );
    expect(detail.facts.map((m) => m.id)).toContain(saved.memory.id);
    expect(detail.relations.map((r) => r.other.name)).toEqual(expect.arrayContaining(['Lisbon', 'Porto']));
    expect((await host.api['graph.search']({ query: 'Nimbus' })).map((e) => e.name)).toContain('Nimbus Labs');
  });

  it('renames with undo, refuses merging an entity with itself, and merges two with undo', async () => {
    const ana = (await host.api['graph.search']({ query: 'Ana' }))[0]!;
    const renamed = await host.api['graph.rename']({ id: ana.id, name: 'Ana Sousa Ribeiro' });
    expect(renamed.entity.name).toBe('Ana Sousa Ribeiro');
    expect((await host.api['graph.undo']({ changeId: renamed.changeId })).name).toBe('Ana');
    await expect(host.api['graph.merge']({ keepId: ana.id, mergeId: ana.id })).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(host.api['graph.rename']({ id: ana.id, name: '🙂🙂' })).rejects.toMatchObject({ code: 'invalid_input' });

    const [mara] =
      (await host.api['graph.import']({ entities: [{ name: 'Mara', kind: 'person' }], edges: [] }), await host.api['graph.search']({ query: 'Mara' }));
    const merged = await host.api['graph.merge']({ keepId: ana.id, mergeId: mara!.id });
    expect(merged.entity.aliases).toContain('Mara');
    expect((await host.api['graph.view']({})).nodes.map((n) => n.name)).not.toContain('Mara');
    await host.api['graph.undo']({ changeId: merged.changeId });
    expect((await host.api['graph.view']({})).nodes.map((n) => n.name)).toContain('Mara');
  });
});
