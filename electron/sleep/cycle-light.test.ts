// Light sleep when the model misbehaves, on real PGlite through the host API: malformed answers,
// a provider that fails mid-night or all night, and the nightly budget. Harness: testing/cycle-harness.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findTask } from '../../e2e/fake-llm/sleep-responder.js';
import { type AuditEntry, type SleepRun } from '../../shared/api.js';
import {
  day,
  at,
  responder,
  model,
  lightSleep,
  ERROR_500,
  sleepIsDown,
  said,
  copyOf,
  seedDir,
  Line,
  talk,
  LONG_TEXTS,
  longDir,
  Opened,
  closeHost,
  openHost,
  connect,
  night,
  stepOf,
  auditOf,
  promptOf,
  allMemories,
  anchorsOf,
  messagesOf,
  say,
  DEPENDANTS,
  useCycleHarness,
} from './testing/cycle-harness.js';

useCycleHarness();

describe('malformed answers', () => {
  // Four conversations of two ~250-character messages: at 1024 tokens each is a call of its own.
  const TALKS: Record<'prose' | 'unknownType' | 'huge' | 'secret', [string, Line[]]> = {
    prose: [
      'Book club',
      [
        {
          who: 'Mara',
          text: "I finally finished the long novel about the lighthouse keeper's daughter that Joana lent me last winter; the ending made me cry on the tram home, which was a little embarrassing with a whole school class watching me sniffle.",
        },
        {
          who: 'Me',
          text: "Books that move us in public are the ones we remember longest. What was it about the ending that hit you so hard — the father's letters, or the storm on the final night at the lighthouse, when nobody came?",
        },
      ],
    ],
    unknownType: [
      'Cycling',
      [
        {
          who: 'Mara',
          text: 'My new bicycle arrived today, a second-hand steel frame in a faded green, with a basket big enough for groceries; I rode it along the river to the market just to feel the wind, grinning like a child the whole way.',
        },
        {
          who: 'Me',
          text: 'A green steel bicycle with a basket sounds perfect for your neighbourhood. Did the brakes feel safe on the cobblestones near the market, or will you take it to the repair shop on Rua Nova first?',
        },
      ],
    ],
    huge: [
      'Recipes',
      [
        {
          who: 'Mara',
          text: "I tried my grandmother's orange cake recipe from the stained index card, the one with olive oil instead of butter; it came out dense in the middle, so I think my oven runs colder than hers did back in the village.",
        },
        {
          who: 'Me',
          text: 'Old ovens often ran hotter than their dials claimed. Next time you could bake it ten degrees higher, or a little longer, and check the middle with a skewer before taking it out of the oven to cool.',
        },
      ],
    ],
    secret: [
      'Work news',
      [
        {
          who: 'Mara',
          text: 'The museum finally gave me access to the digital archive system today; I spent the afternoon scanning fragile postcards from the nineteen-twenties, the handwriting on some of them is beautiful beyond words.',
        },
        {
          who: 'Me',
          text: 'Scanning those postcards must feel like reading over the shoulders of people a century ago. Which one stayed with you most — a love letter, a holiday greeting, or something stranger from the archive?',
        },
      ],
    ],
  };
  const PROSE = 'Sure! Here is what I remember about the day: Mara finished a novel and cried on the tram.';
  const TRUNCATED = '{"memories": [{"type": "experience", "content": "Mara finished the novel Joana lent';
  const HUGE = `{"memories": [${'x'.repeat(210_000)}`;
  const KEY = 'sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34';
  let D: Opened;
  let ids: Record<keyof typeof TALKS, string>;
  let first: SleepRun;
  let rows: Map<string, AuditEntry[]>;

  /** The conversation a light-sleep prompt is about (its transcript, not the diary notes after it). */
  const talkOf = (prompt: string) => {
    const transcript = prompt.slice(0, prompt.indexOf('## Narratives wanted'));
    return (Object.keys(TALKS) as (keyof typeof TALKS)[]).find((k) => transcript.includes(TALKS[k][1][0]!.text))!;
  };
  const savedFor = async (key: keyof typeof TALKS) => {
    const messageIds = new Set((await messagesOf(D.host, ids[key])).map((m) => m.id));
    return {
      anchors: (await anchorsOf(D.host)).filter((a) => a.conversationId === ids[key]),
      memories: (await allMemories(D.host)).filter((m) => m.sourceMessageIds.some((id) => messageIds.has(id))),
    };
  };

  beforeAll(async () => {
    model.reset();
    const seeded = await seedDir(async ({ conversations }) => {
      const out = {} as Record<keyof typeof TALKS, string>;
      for (const [key, [title, lines]] of Object.entries(TALKS) as [keyof typeof TALKS, [string, Line[]]][]) {
        out[key] = await talk(conversations, title, day(-1), lines);
      }
      return out;
    });
    ids = seeded.value;
    D = await openHost(seeded.dir, { lowDisk: true });
    await connect(D.host, { contextTokens: 1024 });
    // The chunks come in the order the conversations were written: prose, unknownType, huge, secret.
    model.scripted.push(
      { purpose: 'light-sleep', reply: { kind: 'text', text: PROSE } },
      { purpose: 'light-sleep', reply: { kind: 'text', text: TRUNCATED } },
      { purpose: 'light-sleep', reply: lightSleep((a) => a.memories.forEach((m) => ((m as { type: string }).type = 'feeling'))) },
      { purpose: 'light-sleep', reply: lightSleep((a) => a.memories.forEach((m) => ((m as { type: string }).type = 'feeling'))) },
      { purpose: 'light-sleep', reply: { kind: 'text', text: HUGE, chunks: 40 } },
      { purpose: 'light-sleep', reply: lightSleep() },
      {
        purpose: 'light-sleep',
        reply: lightSleep((a, prompt) => {
          const ref = /\[(m\d+)\]/.exec(prompt.slice(prompt.indexOf('## Conversation')))![1]!;
          a.memories.push(
            { type: 'world', content: `Mara's work API key is ${KEY}, kept in her notes app.`, entities: ['Mara'], sources: [ref], relations: [] },
            {
              type: 'world',
              content: 'The museum wifi password=Tr0ub4dor3xQ9 is taped under the front desk.',
              entities: ['museum'],
              sources: [ref],
              relations: [],
            },
          );
        }),
      },
    );
    ({ run: first } = await night(D.host));
    expect(model.scripted).toHaveLength(0);
    rows = new Map();
    for (const row of await auditOf(D.host, first.id, 'light-sleep')) {
      const key = talkOf(await promptOf(D.host, row));
      rows.set(key, [...(rows.get(key) ?? []), row]);
    }
  });

  afterAll(() => closeHost(D));

  it('prose, then truncated JSON on the repair: two invalid rows, nothing saved for the chunk', async () => {
    expect(first.status).toBe('done');
    expect(stepOf(first, 'light-sleep').stats).toMatchObject({ calls: 4, invalid_chunks: 2, chunks_done: 2 });
    const [prose, repair] = rows.get('prose')! as [AuditEntry, AuditEntry];
    expect(rows.get('prose')).toHaveLength(2);
    expect(prose).toMatchObject({ status: 'invalid', error: expect.stringMatching(/^Invalid answer: it is not valid JSON/) });
    expect(repair).toMatchObject({ status: 'invalid', error: expect.stringMatching(/^Invalid answer: it is not valid JSON/) });
    expect((await D.host.api['sleep.auditEntry']({ id: prose.id })).response).toBe(PROSE);
    const second = await D.host.api['sleep.auditEntry']({ id: repair.id });
    expect(second.response).toBe(TRUNCATED);
    // The chunk filled the context, so the repair names the problem without quoting the answer.
    expect(second.prompt).toContain('Your previous answer could not be used: it is not valid JSON');
    expect(second.prompt).not.toContain(PROSE);
    expect(await savedFor('prose')).toEqual({ anchors: [], memories: [] });
  });

  it('an unknown memory type is invalid too', async () => {
    const attempts = rows.get('unknownType')!;
    expect(attempts.map((r) => r.status)).toEqual(['invalid', 'invalid']);
    for (const r of attempts) expect(r.error).toMatch(/does not match the expected shape \(memories\.0\.type: /);
    expect(await savedFor('unknownType')).toEqual({ anchors: [], memories: [] });
  });

  it('a 200 KB answer is cut off and invalid (the repair then succeeds)', async () => {
    const [huge, repair] = rows.get('huge')! as [AuditEntry, AuditEntry];
    expect(huge).toMatchObject({ status: 'invalid', responseChars: 200 * 1024 });
    expect(huge.error).toMatch(/longer than 204800 characters and was cut off/);
    expect(repair.status).toBe('ok');
    expect((await savedFor('huge')).anchors).toHaveLength(1);
  });

  it('a memory holding a secret is refused; the rest of its chunk is saved', async () => {
    expect(rows.get('secret')!.map((r) => r.status)).toEqual(['ok']);
    expect(stepOf(first, 'light-sleep').stats!.refused_secrets).toBe(2);
    const saved = await savedFor('secret');
    expect(saved.anchors).toHaveLength(1);
    expect(saved.memories.length).toBeGreaterThan(0);
    const everything = (await allMemories(D.host)).map((m) => m.content).join('\n');
    expect(everything).not.toContain(KEY);
    expect(everything).not.toContain('Tr0ub4dor3xQ9');
  });

  it('the invalid chunks were not passed: a later night with a sound model extracts exactly those', async () => {
    const { run } = await night(D.host);
    expect(run.status).toBe('done');
    expect(stepOf(run, 'light-sleep').stats).toMatchObject({ calls: 2, chunks_done: 2, invalid_chunks: 0 });
    const read = await Promise.all((await auditOf(D.host, run.id, 'light-sleep')).map(async (r) => talkOf(await promptOf(D.host, r))));
    expect(read).toEqual(['prose', 'unknownType']);
    for (const key of Object.keys(TALKS) as (keyof typeof TALKS)[]) expect((await savedFor(key)).anchors).toHaveLength(1);
  });
});

// ---------------------------------------------------------------------------------------------

describe('a provider that fails, and the nightly budget', () => {
  let E: Opened;
  const chunkOne: string[] = [];

  beforeAll(async () => {
    model.reset();
    E = await openHost(copyOf(longDir), { lowDisk: true });
    await connect(E.host, { name: 'chat' });
    const background = await connect(E.host, { name: 'background', contextTokens: 1024 });
    await E.host.api['settings.update']({ backgroundProviderId: background.id });
  });

  afterAll(() => closeHost(E));

  it('a provider that fails in the middle keeps the chunks before the failure', async () => {
    let lightCalls = 0;
    model.answer = (body) => {
      const task = findTask(body);
      if (!task) return undefined;
      return task.purpose === 'light-sleep' && lightCalls++ === 0 ? responder(body) : ERROR_500;
    };
    const { event, run } = await night(E.host);
    expect(event).toMatchObject({ status: 'failed', error: 'light-sleep failed' });
    const light = stepOf(run, 'light-sleep');
    expect(light).toMatchObject({ status: 'failed', stats: expect.objectContaining({ calls: 2, chunks_done: 1 }) });
    expect(light.error).toMatch(/^The background model did not answer .*; 1 of \d chunks were done/);
    expect((await auditOf(E.host, run.id, 'light-sleep')).map((a) => a.status)).toEqual(['ok', 'error']);
    for (const id of DEPENDANTS) expect(stepOf(run, id)).toMatchObject({ status: 'skipped', reason: 'needs light-sleep, which failed' });

    // The first chunk's writes stay: its anchor and memories, citing only its messages.
    const [ok] = await auditOf(E.host, run.id, 'light-sleep');
    chunkOne.push(...said(await promptOf(E.host, ok!)));
    expect(chunkOne).toEqual(LONG_TEXTS.slice(0, chunkOne.length));
    const conversationId = (await E.host.api['conversations.list']({}))[0]!.id;
    const firstIds = new Set((await messagesOf(E.host, conversationId)).filter((m) => chunkOne.includes(m.content)).map((m) => m.id));
    expect(await anchorsOf(E.host)).toHaveLength(1);
    const memories = (await allMemories(E.host)).filter((m) => m.source === 'light-sleep');
    expect(memories.length).toBeGreaterThan(0);
    for (const m of memories) for (const id of m.sourceMessageIds) expect(firstIds.has(id)).toBe(true);
  });

  it('a provider down for the whole night fails light sleep and skips what needs it, visibly; once it is back the next night finishes', async () => {
    model.answer = sleepIsDown;
    const [earlier] = await E.host.api['sleep.runs']({ limit: 1 });
    const { event, run } = await night(E.host);
    expect(event).toMatchObject({ status: 'failed', error: 'light-sleep failed' });
    expect(stepOf(run, 'memory-ref-sync')).toMatchObject({ status: 'done', reason: `done in run ${earlier!.id}` });
    expect(stepOf(run, 'light-sleep')).toMatchObject({ status: 'failed', stats: expect.objectContaining({ calls: 1, chunks_done: 0 }) });
    expect(stepOf(run, 'light-sleep').error).toMatch(/^The background model did not answer/);
    for (const id of DEPENDANTS) expect(stepOf(run, id)).toMatchObject({ status: 'skipped', reason: 'needs light-sleep, which failed' });
    expect((await auditOf(E.host, run.id)).map((a) => [a.purpose, a.status])).toEqual([['light-sleep', 'error']]);

    const status = await E.host.api['sleep.status']({});
    expect(status.running).toBeNull();
    expect(status.lastRun).toMatchObject({ id: run.id, status: 'failed', error: 'light-sleep failed' });
    expect((await E.host.api['sleep.runs']({ limit: 5 })).map((r) => r.status)).toEqual(['failed', 'failed']);

    model.answer = responder;
    const back = await night(E.host);
    expect(back.event).toMatchObject({ status: 'done', error: null });
    expect(back.run.steps.every((s) => s.status === 'done')).toBe(true);
    expect(stepOf(back.run, 'light-sleep').stats).toMatchObject({ anchors: 0, anchors_kept: stepOf(back.run, 'light-sleep').stats!.chunks_done });
    const rest = (await Promise.all((await auditOf(E.host, back.run.id, 'light-sleep')).map(async (a) => said(await promptOf(E.host, a))))).flat();
    expect([...chunkOne, ...rest]).toEqual(LONG_TEXTS);
    expect(await anchorsOf(E.host)).toHaveLength(1);
  });

  it('over the budget the night stops with partial stats and skips the rest; the next night finishes it', async () => {
    const conv = await E.host.api['conversations.create']({ title: 'Night thoughts' });
    // ~700 characters: the message and its echoed reply are a chunk each at 1024 tokens.
    const long =
      'I keep thinking about the old tram depot near the river that they are turning into a library; ' +
      'my grandfather drove the number twenty-eight for thirty years, starting from that very depot every morning at five. ' +
      'He used to say the trams had personalities, that number five hundred and twelve always sulked on cold mornings, ' +
      'while the little yellow one with the cracked bell was the bravest on the steep hill up to the castle. ' +
      'I wonder whether the library will keep the tracks in the floor, or the big clock above the gate that never worked. ' +
      'I would like to sit there someday with a book, right where he clocked in, hearing the echo of those bells.';
    await say(E.host, conv.id, long);
    const convMessages = await messagesOf(E.host, conv.id);
    expect(convMessages.map((m) => m.role)).toEqual(['user', 'assistant']);

    E.clock.now = at(day(1), 12);
    await E.host.api['settings.update']({ sleep: { maxCallsPerNight: 1 } });
    const stopped = await night(E.host);
    expect(stopped.event.status).toBe('stopped');
    expect(stopped.event.error).toMatch(/^Over tonight's budget for background work \(1 of 1 calls/);
    expect(stepOf(stopped.run, 'memory-ref-sync').status).toBe('done');
    expect(stepOf(stopped.run, 'light-sleep')).toMatchObject({
      status: 'stopped',
      error: stopped.event.error,
      stats: expect.objectContaining({ calls: 1, chunks_done: 1, messages: 2 }),
    });
    for (const id of DEPENDANTS) expect(stepOf(stopped.run, id)).toMatchObject({ status: 'skipped', reason: `not run: ${stopped.event.error}` });
    expect((await E.host.api['sleep.status']({})).budget).toMatchObject({ calls: 1, maxCalls: 1 });

    // The same night again spends nothing more.
    const again = await night(E.host);
    expect(again.event.status).toBe('stopped');
    expect(stepOf(again.run, 'light-sleep').stats).toMatchObject({ calls: 0, chunks_done: 0 });
    expect(await auditOf(E.host, again.run.id)).toHaveLength(0);

    // The next night has its own budget and reads on from where the stopped one ended.
    E.clock.now = at(day(2), 12);
    await E.host.api['settings.update']({ sleep: { maxCallsPerNight: 60 } });
    expect((await E.host.api['sleep.status']({})).budget.calls).toBe(0);
    const next = await night(E.host);
    expect(next.event.status).toBe('done');
    expect(next.run.steps.every((s) => s.status === 'done')).toBe(true);
    expect(stepOf(next.run, 'light-sleep').stats).toMatchObject({ calls: 1, chunks_done: 1, messages: 1 });
    const [call] = await auditOf(E.host, next.run.id, 'light-sleep');
    expect(said(await promptOf(E.host, call!))).toEqual([convMessages[1]!.content]);
    expect((await anchorsOf(E.host)).filter((a) => a.conversationId === conv.id)).toHaveLength(1);
  });
});

// ---------------------------------------------------------------------------------------------
