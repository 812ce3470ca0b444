// Light sleep meeting a fact the person forgot, on real PGlite through the host API and the loopback
// model: the night's answer saves it again from the message it came from, and the store skips the
// save. Light sleep counts it apart (memories_forgotten_skipped, not created or updated), writes no
// memory, and rests none of the answer's relations on it; the rest of the same answer is saved as
// usual. Harness: testing/cycle-harness.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Memory, SleepRun } from '../../shared/api.js';
import type { Host } from '../host/types.js';
import {
  allMemories,
  closeHost,
  connect,
  day,
  lightSleep,
  messagesOf,
  model,
  night,
  openHost,
  seedDir,
  stepOf,
  talk,
  useCycleHarness,
  type Opened,
} from './testing/cycle-harness.js';

useCycleHarness();

const ALLERGY = 'Mara is allergic to peanuts; the Brightwater Clinic confirmed it.';
const CAT = 'Mara adopted a grey cat named Miso from the Alfama shelter.';

/** The typed relations (no co-mentions) of the entity with exactly this name, or none when there is no such entity. */
async function relationsOf(host: Host, name: string) {
  const entity = (await host.api['graph.search']({ query: name })).find((e) => e.name === name);
  if (!entity) return [];
  return (await host.api['graph.entity']({ id: entity.id })).relations.filter((r) => r.relation !== 'co_mention');
}

describe('light sleep saving a fact the person forgot', () => {
  let D: Opened;
  let conversationId: string;
  let forgottenId: number;
  let run: SleepRun;
  let after: Memory[];

  beforeAll(async () => {
    model.reset();
    // Yesterday's chat; a nap kept the allergy from its first message, and the person forgot it.
    const seeded = await seedDir(async ({ conversations, store }) => {
      const id = await talk(conversations, 'Health and pets', day(-1), [
        { who: 'Mara', text: 'The Brightwater Clinic confirmed it: I am allergic to peanuts. Also, I adopted a grey cat called Miso from the Alfama shelter!' },
        { who: 'Me', text: 'Good to know about the peanuts, I will keep that in mind. And welcome, Miso! How is the little one settling in?' },
      ]);
      const [first] = await conversations.messages(id);
      const saved = await store.create({
        type: 'world',
        content: ALLERGY,
        source: 'light-sleep',
        actor: 'light-sleep',
        sourceMessageIds: [first!.id],
        entityNames: ['Mara', 'Brightwater Clinic'],
        reason: `nap of ${day(-1)}`,
      });
      expect(saved.outcome).toBe('created');
      await store.forget(saved.memory.id, 'person', 'the person asked me to forget it');
      return { conversationId: id, forgottenId: saved.memory.id };
    });
    ({ conversationId, forgottenId } = seeded.value);
    D = await openHost(seeded.dir, { lowDisk: true });
    await connect(D.host);
    expect((await D.host.api['memories.get']({ id: forgottenId })).memory.status).toBe('expired');

    // The night reads the same message and words both facts, each with a relation resting on it.
    model.scripted.push({
      purpose: 'light-sleep',
      reply: lightSleep((a, prompt) => {
        const ref = /\[(m\d+)\]/.exec(prompt.slice(prompt.indexOf('## Conversation')))![1]!;
        a.memories = [
          {
            type: 'world',
            content: ALLERGY,
            entities: ['Mara', 'Brightwater Clinic'],
            sources: [ref],
            validFrom: null,
            validTo: null,
            relations: [{ subject: 'Mara', relation: 'patient_of', object: 'Brightwater Clinic', validFrom: null, validTo: null }],
          },
          {
            type: 'world',
            content: CAT,
            entities: ['Mara', 'Miso'],
            sources: [ref],
            validFrom: null,
            validTo: null,
            relations: [{ subject: 'Mara', relation: 'owns', object: 'Miso', validFrom: null, validTo: null }],
          },
        ];
      }),
    });
    ({ run } = await night(D.host));
    expect(model.scripted).toHaveLength(0);
    after = await allMemories(D.host);
  }, 60_000);

  afterAll(() => closeHost(D));

  it('counts it as memories_forgotten_skipped, apart from what it created or updated', () => {
    expect(run.status).toBe('done');
    expect(stepOf(run, 'light-sleep').stats).toMatchObject({ chunks_done: 1, memories_forgotten_skipped: 1, memories_created: 1 });
    expect(stepOf(run, 'light-sleep').stats!.memories_updated ?? 0).toBe(0);
  });

  it('writes no memory for it: the forgotten one stays forgotten and nothing active says it', async () => {
    expect((await D.host.api['memories.get']({ id: forgottenId })).memory).toMatchObject({ status: 'expired', content: ALLERGY });
    expect(after.filter((m) => m.content === ALLERGY).map((m) => m.id)).toEqual([forgottenId]);
    expect(after.filter((m) => m.status === 'active' && /peanut/i.test(m.content))).toEqual([]);
  });

  it("uses it as no relation's evidence, while the other memory of the answer gets its relation", async () => {
    expect(stepOf(run, 'light-sleep').stats).toMatchObject({ relations_dropped: 1, relations_created: 1 });
    expect(await relationsOf(D.host, 'Brightwater Clinic')).toEqual([]);
    const cat = after.find((m) => m.content === CAT && m.status === 'active')!;
    const firstMessage = (await messagesOf(D.host, conversationId))[0]!;
    expect(cat.sourceMessageIds).toEqual([firstMessage.id]);
    const owns = (await relationsOf(D.host, 'Miso')).filter((r) => r.relation === 'owns');
    expect(owns).toHaveLength(1);
    expect(owns[0]!.evidenceMemoryIds).toEqual([cat.id]);
    const evidence = (await relationsOf(D.host, 'Mara')).flatMap((r) => r.evidenceMemoryIds);
    expect(evidence).not.toContain(forgottenId);
  });
});
