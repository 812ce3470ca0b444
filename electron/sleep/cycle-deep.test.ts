// Deep sleep on real PGlite through the host API: the snapshot before it, linked supersedes with
// undo, splits, pin proposals and merges that carry citations. Harness: testing/cycle-harness.ts.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findTask, type SleepPurpose } from '../../e2e/fake-llm/sleep-responder.js';
import { type SleepRun } from '../../shared/api.js';
import type { Host } from '../host/types.js';
import { listedId } from './testing/fixture.js';
import { TEST_ENGINE } from '../testing/host.js';
import { rejection } from '../testing/rejection.js';
import {
  TODAY,
  day,
  responder,
  model,
  json,
  lightSleep,
  seedDir,
  talk,
  Opened,
  closeHost,
  openHost,
  connect,
  night,
  stepOf,
  allMemories,
  useCycleHarness,
} from './testing/cycle-harness.js';

useCycleHarness();

describe('deep sleep', () => {
  const LISBON = 'Mara moved to Lisbon last month.';
  const MERGED = "Mara's sister Lena is a cellist with the city orchestra.";
  const PARTS = ['Mara runs a small bakery in Lisbon.', 'Mara teaches pottery on Sunday mornings.'];
  let C: Opened;
  let seeded: Record<'berlin' | 'cello1' | 'cello2' | 'compound' | 'cat', number>;
  let first: SleepRun;
  let digest: NonNullable<Awaited<ReturnType<Host['api']['sleep.digest']>>>;
  const memory = async (id: number) => (await C.host.api['memories.get']({ id })).memory;
  const byContent = async (content: string) => (await allMemories(C.host)).find((m) => m.content === content)!;

  beforeAll(async () => {
    model.reset();
    const s = await seedDir(async ({ conversations, store }) => {
      const save = async (content: string, entityNames: string[] = []) => {
        const r = await store.create({ type: 'world', content, entityNames, source: 'user', actor: 'person' });
        expect(r.outcome).toBe('created');
        return r.memory.id;
      };
      const ids = {
        berlin: await save('Mara lives in Berlin.', ['Mara', 'Berlin']),
        cello1: await save('Lena plays the cello in the city orchestra.', ['Lena']),
        cello2: await save('Every Friday Lena plays cello for the city orchestra.', ['Lena']),
        compound: await save('Mara runs a small bakery in Lisbon; Mara teaches pottery on Sunday mornings.', ['Mara', 'Lisbon']),
        cat: await save("Mara's cat is called Pixel.", ['Mara', 'Pixel']),
      };
      const cat = `[[anima:${ids.cat}]]`;
      const cello = `[[anima:${ids.cello1}]]`;
      await talk(conversations, 'Catching up', day(-1), [
        { who: 'Mara', text: `We finally moved! I live in Lisbon now. Pixel ${cat} loves the new balcony.` },
        { who: 'Me', text: `Pixel ${cat} must be thrilled with all that sun. How is Lena ${cello} doing?` },
        { who: 'Mara', text: `Lena ${cello} still plays in the orchestra. Pixel ${cat} sleeps on her cello case.` },
        { who: 'Me', text: `Pixel ${cat} clearly has good taste in furniture.` },
        { who: 'Mara', text: `Ha, yes. Pixel ${cat} also ate my basil this morning.` },
      ]);
      return ids;
    });
    seeded = s.value;
    C = await openHost(s.dir, { lowDisk: true });
    await connect(C.host);

    // Deep sleep answers only what each rule needs; any further round gets an empty answer.
    const empty: Partial<Record<SleepPurpose, unknown>> = {
      'deep-sleep:contradictions': { operations: [] },
      'deep-sleep:split': { splits: [] },
      'deep-sleep:merge': { merges: [] },
    };
    model.answer = (body) => {
      const task = findTask(body);
      return task && empty[task.purpose] ? json(empty[task.purpose]) : responder(body);
    };
    const validFrom = day(-30);
    model.scripted.push(
      {
        purpose: 'light-sleep',
        reply: lightSleep((a, prompt) => {
          const ref = /\[(m\d+)\]/.exec(prompt.slice(prompt.indexOf('## Conversation')))![1]!;
          a.memories = [{ type: 'world', content: LISBON, entities: ['Mara', 'Lisbon'], sources: [ref], validFrom, relations: [] }];
        }),
      },
      {
        purpose: 'deep-sleep:contradictions',
        reply: (prompt) => {
          const newer = listedId(prompt, LISBON);
          return json({ operations: newer ? [{ op: 'supersede', older: seeded.berlin, newer, reason: 'Mara moved from Berlin to Lisbon.' }] : [] });
        },
      },
      {
        purpose: 'deep-sleep:split',
        reply: () => json({ splits: [{ id: seeded.compound, parts: PARTS.map((content) => ({ type: 'world', content })), reason: 'Two separate facts.' }] }),
      },
      {
        purpose: 'deep-sleep:merge',
        reply: () => json({ merges: [{ ids: [seeded.cello1, seeded.cello2], type: 'world', content: MERGED, reason: 'The same fact twice.' }] }),
      },
    );
    ({ run: first } = await night(C.host));
    digest = (await C.host.api['sleep.digest']({}))!;
  });

  afterAll(() => closeHost(C));

  it('with the disk nearly full the snapshot is skipped, and deep sleep still runs', () => {
    expect(first.status).toBe('done');
    // On PostgreSQL there is no folder to copy at all (the server's own backups apply); deep sleep runs the same.
    const skipped = TEST_ENGINE === 'postgres' ? { skipped_server_engine: 1 } : { skipped_low_disk: 1 };
    expect(stepOf(first, 'snapshot')).toMatchObject({ status: 'done', stats: expect.objectContaining(skipped) });
    const snapshots = path.join(C.dir, 'snapshots');
    expect(fs.existsSync(snapshots) ? fs.readdirSync(snapshots) : []).toEqual([]);
    const deep = stepOf(first, 'deep-sleep');
    expect(deep).toMatchObject({ status: 'done', stats: expect.objectContaining({ superseded: 1, split: 1, merged: 1, refused: 0 }) });
    expect(deep.stats!.calls).toBeLessThanOrEqual(6);
  });

  it('supersedes an older memory by a newer one, linked and journalled, and undo restores it', async () => {
    const lisbon = await byContent(LISBON);
    expect(lisbon).toMatchObject({ source: 'light-sleep', status: 'active', validFrom: new Date(`${day(-30)}T00:00:00Z`).toISOString() });
    const { memory: berlin, history, chain } = await C.host.api['memories.get']({ id: seeded.berlin });
    expect(berlin).toMatchObject({ status: 'superseded', supersededBy: lisbon.id, validTo: lisbon.validFrom });
    const change = history.find((c) => c.action === 'supersede')!;
    expect(change).toMatchObject({ actor: 'deep-sleep', reason: 'Mara moved from Berlin to Lisbon.', undoneBy: null });
    expect(chain.map((m) => m.id)).toEqual([seeded.berlin, lisbon.id]);
    expect(digest.superseded.map((c) => [c.memoryId, c.changeId])).toContainEqual([seeded.berlin, change.id]);

    const restored = await C.host.api['memories.undo']({ changeId: change.id });
    expect(restored).toMatchObject({ id: seeded.berlin, status: 'active', supersededBy: null, validTo: null });
    expect((await memory(lisbon.id)).status).toBe('active');
    const live = (await C.host.api['sleep.digest']({ day: TODAY }))!;
    expect(live.superseded.find((c) => c.changeId === change.id)!.undoneBy).not.toBeNull();
  });

  it('splits a compound memory into atomic ones that inherit its entities', async () => {
    const old = await memory(seeded.compound);
    const parts = await Promise.all(PARTS.map(byContent));
    expect(old).toMatchObject({ status: 'superseded', supersededBy: parts[0]!.id });
    for (const p of parts) expect(p).toMatchObject({ source: 'deep-sleep', status: 'active', type: 'world', entityNames: ['Mara', 'Lisbon'] });
  });

  it('proposes pinning a memory cited five times; accepting pins it, once', async () => {
    expect(stepOf(first, 'deep-sleep').stats!.proposals).toBe(1);
    expect(digest.proposals).toEqual([
      expect.objectContaining({
        memoryId: seeded.cat,
        action: 'pin',
        reason: 'used in 5 replies',
        reasonCode: { code: 'much_used', replies: 5 },
        status: 'open',
      }),
    ]);
    const proposal = digest.proposals[0]!;
    expect(await C.host.api['sleep.resolveProposal']({ id: proposal.id, accept: true })).toMatchObject({ status: 'accepted' });
    expect(await memory(seeded.cat)).toMatchObject({ pinned: true });
    expect((await rejection(C.host.api['sleep.resolveProposal']({ id: proposal.id, accept: true }))).code).toBe('conflict');
  });

  it('merges near-duplicates into one memory both point at, and the next night credits their citations to it', async () => {
    const merged = await byContent(MERGED);
    expect(merged).toMatchObject({ source: 'deep-sleep', status: 'active', entityNames: ['Lena'] });
    for (const id of [seeded.cello1, seeded.cello2]) expect(await memory(id)).toMatchObject({ status: 'superseded', supersededBy: merged.id });
    expect((await memory(seeded.cello1)).referenceCount).toBe(2); // counted before the merge

    const { run } = await night(C.host);
    expect(run.status).toBe('done');
    expect((await memory(merged.id)).referenceCount).toBe(2);
    expect((await memory(seeded.cello1)).referenceCount).toBe(0);
    expect((await memory(seeded.cat)).referenceCount).toBe(5);
  });
});

// ---------------------------------------------------------------------------------------------
