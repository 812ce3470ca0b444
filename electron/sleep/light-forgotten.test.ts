// Light sleep meeting a fact the person forgot (without its sources: the messages stay), on real
// PGlite through the host API and the loopback model. The night shows the model none of the messages
// behind the forget — a stretch of nothing else makes no call — yet reads past them. An answer that
// says the fact anyway (made up, or read elsewhere) saves no memory: the store skips the save, and
// light sleep counts it apart (memories_forgotten_skipped, not created or updated) and rests none of
// the answer's relations on it. The diary blocks that say it again (an anchor, the day's narrative)
// are written hidden on behalf of the forget, and its undo shows them; the rest of the same answer is
// saved as usual. Harness: testing/cycle-harness.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Memory, SleepRun } from '../../shared/api.js';
import type { Host } from '../host/types.js';
import {
  allMemories,
  auditOf,
  closeHost,
  connect,
  day,
  lightSleep,
  messagesOf,
  model,
  night,
  openHost,
  promptOf,
  seedDir,
  stepOf,
  talk,
  useCycleHarness,
  type Opened,
} from './testing/cycle-harness.js';

useCycleHarness();

const ALLERGY = 'Mara is allergic to peanuts; the Brightwater Clinic confirmed it.';
const CAT = 'Mara adopted a grey cat named Miso from the Alfama shelter.';
const TOLD = 'The Brightwater Clinic confirmed it: I am allergic to peanuts.';
/** The one message of another conversation the allergy was told in too. */
const TOLD_AGAIN = 'Reminder to self: the peanut allergy test came back positive.';
/** Light sleep's diary, in the answer's words: the anchor says the fact again nearly word for word, the narrative in a longer account. */
const ANCHOR = 'Mara is allergic to peanuts, the Brightwater Clinic confirmed it; warm all the same.';
const NARRATIVE = 'Today I learned that Mara is allergic to peanuts, which the Brightwater Clinic confirmed, and then met her new cat Miso.';
const IMPRINT = 'A grey kitten from the Alfama shelter, and Mara beaming about him.';

const diaryOf = async (host: Host) =>
  (await host.api['diary.days']({ limit: 30 })).flatMap((d) => [...d.anchors, ...d.imprints, ...d.narratives]).map((b) => b.body);

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
  let forgetChangeId: number;
  let run: SleepRun;
  let after: Memory[];

  beforeAll(async () => {
    model.reset();
    // Yesterday's chats; a nap kept the allergy from the message that told it (and a note in another
    // conversation), and the person forgot it.
    const seeded = await seedDir(async ({ conversations, store }) => {
      const id = await talk(conversations, 'Health and pets', day(-1), [
        { who: 'Mara', text: TOLD },
        { who: 'Mara', text: 'Also, I adopted a grey cat called Miso from the Alfama shelter!' },
        { who: 'Me', text: 'Welcome, Miso! How is the little one settling in?' },
      ]);
      const note = await talk(conversations, 'Notes', day(-1), [{ who: 'Mara', text: TOLD_AGAIN }], 15);
      const [told] = await conversations.messages(id);
      const [again] = await conversations.messages(note);
      const saved = await store.create({
        type: 'world',
        content: ALLERGY,
        source: 'light-sleep',
        actor: 'light-sleep',
        sourceMessageIds: [told!.id, again!.id],
        entityNames: ['Mara', 'Brightwater Clinic'],
        reason: `nap of ${day(-1)}`,
      });
      expect(saved.outcome).toBe('created');
      const forgotten = await store.forget(saved.memory.id, 'person', 'the person asked me to forget it');
      return { conversationId: id, forgottenId: saved.memory.id, forgetChangeId: forgotten.changeId! };
    });
    ({ conversationId, forgottenId, forgetChangeId } = seeded.value);
    D = await openHost(seeded.dir, { lowDisk: true });
    await connect(D.host);
    expect((await D.host.api['memories.get']({ id: forgottenId })).memory.status).toBe('expired');

    // The night words both facts from the first message it is shown, each with a relation resting on
    // it, and tells the allergy again in the anchor and the narrative.
    model.scripted.push({
      purpose: 'light-sleep',
      reply: lightSleep((a, prompt) => {
        const ref = /\[(m\d+)\]/.exec(prompt.slice(prompt.indexOf('## Conversation')))![1]!;
        a.anchors = [{ conversation: 'c1', day: day(-1), valence: 0.4, arousal: 0.3, labels: ['warm'], text: ANCHOR }];
        a.imprints = [{ conversation: 'c1', day: day(-1), text: IMPRINT, sources: [ref] }];
        a.narratives = [{ day: day(-1), title: 'Miso', body: NARRATIVE }];
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

  it('shows the model no message behind the forget, and makes no call for a conversation of nothing else', async () => {
    const [call, ...more] = await auditOf(D.host, run.id, 'light-sleep');
    expect(more).toEqual([]);
    const prompt = await promptOf(D.host, call!);
    expect(prompt).toContain('Also, I adopted a grey cat called Miso');
    expect(prompt).toContain('How is the little one settling in?');
    expect(prompt).not.toContain(TOLD);
    expect(prompt).not.toContain(TOLD_AGAIN);
    expect(prompt).not.toContain('## Conversation c2');
    expect(stepOf(run, 'light-sleep').stats).toMatchObject({ calls: 1, messages: 2, conversations: 2 });
  });

  it('counts it as memories_forgotten_skipped, apart from what it created or updated', () => {
    expect(run.status).toBe('done');
    expect(stepOf(run, 'light-sleep').stats).toMatchObject({ chunks_done: 1, memories_forgotten_skipped: 1, memories_created: 1 });
    expect(stepOf(run, 'light-sleep').stats!.memories_updated ?? 0).toBe(0);
  });

  it('writes the anchor and the narrative that say it again hidden, the imprint about the cat shown', async () => {
    expect(stepOf(run, 'light-sleep').stats).toMatchObject({ anchors: 1, imprints: 1, narratives: 1, diary_blocks_hidden: 2 });
    expect(await diaryOf(D.host)).toEqual([IMPRINT]);
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
    const catMessage = (await messagesOf(D.host, conversationId))[1]!;
    expect(cat.sourceMessageIds).toEqual([catMessage.id]);
    const owns = (await relationsOf(D.host, 'Miso')).filter((r) => r.relation === 'owns');
    expect(owns).toHaveLength(1);
    expect(owns[0]!.evidenceMemoryIds).toEqual([cat.id]);
    const evidence = (await relationsOf(D.host, 'Mara')).flatMap((r) => r.evidenceMemoryIds);
    expect(evidence).not.toContain(forgottenId);
  });

  it('shows them once the forget is undone, and the next night reads none of the messages passed over again', async () => {
    await D.host.api['memories.undo']({ changeId: forgetChangeId });
    expect((await diaryOf(D.host)).sort()).toEqual([ANCHOR, IMPRINT, NARRATIVE].sort());
    const { run: next } = await night(D.host);
    expect(next.status).toBe('done');
    expect(await auditOf(D.host, next.id, 'light-sleep')).toEqual([]);
  });
});
