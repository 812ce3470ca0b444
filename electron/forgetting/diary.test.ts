// A forgotten memory is not sent to a model again through the diary either: the diary blocks the
// sleep cycle wrote from the same messages that say the fact again leave recall (the memory_recall
// tool's search), the Diary view and the later sleep steps with it, and come back when the forget is
// undone. Through the host API on a real on-disk PGlite, with a real night against the loopback model.
import { describe, expect, it } from 'vitest';
import type { DiaryBlock } from '../../shared/api.js';
import type { Host } from '../host/types.js';
import { CONVERSATION_HEADING, TRANSCRIPT_LINE } from '../sleep/schemas.js';
import { Conversations } from '../conversations/conversations.js';
import { openTestDatabase } from '../testing/host.js';
import { closeHost, connect, day, lightSleep, model, night, openHost, seedDir, talk, useCycleHarness } from '../sleep/testing/cycle-harness.js';

useCycleHarness();

const FACT = 'Mara is allergic to peanuts.';
const DINNER = [
  { who: 'Mara' as const, text: 'The doctor says I am allergic to peanuts, so no more satay for me.' },
  { who: 'Me' as const, text: 'That is a big change, I am glad you found out.' },
  { who: 'Mara' as const, text: 'We are still going to Lisbon in May.' },
];
const TRIP = [
  { who: 'Mara' as const, text: 'My brother Tomas is learning the cello.' },
  { who: 'Me' as const, text: 'A cello in the house, how lovely.' },
];
// What the night writes: the fact as a memory, and diary blocks that tell it again in the diary's words.
const ANCHOR_DINNER = 'A quiet conversation with Mara. She told me she is allergic to peanuts, and we planned Lisbon in May.';
const IMPRINT_DINNER = 'Mara is allergic to peanuts — no more satay.';
const NARRATIVE = 'Mara found out she is allergic to peanuts. Later her brother Tomas came up: he is learning the cello.';
const ANCHOR_TRIP = 'A warm conversation with Mara about her brother Tomas and his cello.';

const LATER = [
  { who: 'Mara' as const, text: 'Tomas played his first cello concert tonight.' },
  { who: 'Me' as const, text: 'What a night for him.' },
];

async function seed() {
  return seedDir(async ({ conversations }) => {
    await talk(conversations, 'Dinner', day(-1), DINNER);
    await talk(conversations, 'Cello', day(-1), TRIP, 15);
  });
}

/** The conversation and message refs of the dinner's first line in a light-sleep prompt. */
function dinnerRefs(prompt: string): { conversation: string; message: string } {
  let conversation = '';
  for (const line of prompt.split('\n')) {
    const heading = CONVERSATION_HEADING.exec(line);
    if (heading) conversation = heading[1]!;
    const said = TRANSCRIPT_LINE.exec(line);
    if (said && said[4] === DINNER[0]!.text) return { conversation, message: said[1]! };
  }
  throw new Error('the dinner is not in this prompt');
}

/** The night's light sleep writes FACT from the dinner's first message, and the diary blocks above. */
function scriptNight() {
  model.scripted.push({
    purpose: 'light-sleep',
    reply: lightSleep((a, prompt) => {
      const dinner = dinnerRefs(prompt);
      a.memories = [{ type: 'world', content: FACT, entities: ['Mara'], sources: [dinner.message], relations: [] }];
      for (const anchor of a.anchors) anchor.text = anchor.conversation === dinner.conversation ? ANCHOR_DINNER : ANCHOR_TRIP;
      const imprint = a.imprints.find((i) => i.conversation === dinner.conversation)!;
      a.imprints = [{ ...imprint, text: IMPRINT_DINNER, sources: [dinner.message] }];
      for (const n of a.narratives) n.body = NARRATIVE;
    }),
  });
}

/** The diary text recall finds for a question, as the memory_recall tool's search would see it. */
async function diaryRecall(host: Host, query: string): Promise<string[]> {
  const hits = await host.api['recall.search']({ query, sources: ['limbic', 'autobiographical'], limit: 50 });
  return hits.map((h) => h.text);
}

const diaryTexts = async (host: Host) =>
  (await host.api['diary.days']({ limit: 30 })).flatMap((d) => [...d.anchors, ...d.imprints, ...d.narratives] as DiaryBlock[]).map((b) => b.body);

describe('forgetting a memory', () => {
  it('takes the diary blocks that restate it out of recall and the diary; the undo brings them back', async () => {
    const { dir } = await seed();
    const o = await openHost(dir);
    const { host } = o;
    await connect(host);
    scriptNight();
    await night(host);

    const memory = (await host.api['memories.list']({ limit: 50 })).items.find((m) => m.content === FACT)!;
    expect(memory).toBeDefined();
    // Deep sleep wrote Mara's profile from it.
    expect((await host.api['memories.list']({ limit: 50 })).items.filter((m) => m.source === 'deep-sleep' && /peanut/i.test(m.content)).length).toBe(1);
    const peanuts = (texts: string[]) => texts.filter((t) => /peanut/i.test(t));
    expect(peanuts(await diaryRecall(host, 'peanuts allergy satay')).length).toBeGreaterThan(0);
    expect(peanuts(await diaryTexts(host)).length).toBe(3);

    const forget = await host.api['memories.forget']({ id: memory.id });
    // Nothing that says the fact is found any more; the other conversation's anchor still is.
    expect(peanuts(await diaryRecall(host, 'peanuts allergy satay'))).toEqual([]);
    expect(peanuts(await diaryRecall(host, 'Mara allergic peanuts Lisbon Tomas cello'))).toEqual([]);
    expect(await diaryRecall(host, 'Tomas cello')).toContain(ANCHOR_TRIP);
    expect(peanuts(await diaryTexts(host))).toEqual([]);
    expect(await diaryTexts(host)).toContain(ANCHOR_TRIP);

    // Nothing active says it either: deep sleep's profile of Mara, written from it, went with it.
    const activePeanuts = async (h: Host) => (await h.api['memories.list']({ limit: 200 })).items.filter((m) => /peanut/i.test(m.content));
    expect(await activePeanuts(host)).toEqual([]);

    // The next night, about the same day: what its steps read of the diary ("already in my diary for
    // these days", the dream's moments) leaves them out too, so no prompt says the fact.
    await closeHost(o);
    const db = await openTestDatabase(dir);
    await talk(new Conversations(db), 'Concert', day(-1), LATER, 20);
    await db.close();
    const again = await openHost(dir);
    await connect(again.host);
    model.tasks.length = 0;
    await night(again.host);
    expect(model.tasks.length).toBeGreaterThan(0);
    expect(model.tasks.filter((t) => /peanut/i.test(t.prompt)).map((t) => t.purpose)).toEqual([]);

    await again.host.api['memories.undo']({ changeId: forget.changeId! });
    expect(peanuts(await diaryRecall(again.host, 'peanuts allergy satay')).length).toBeGreaterThan(0);
    expect(peanuts(await diaryTexts(again.host)).length).toBe(3);
    expect((await activePeanuts(again.host)).map((m) => m.source).sort()).toEqual(['deep-sleep', 'light-sleep']);
    await closeHost(again);
  });
});
