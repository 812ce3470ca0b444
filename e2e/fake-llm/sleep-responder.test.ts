// The sleep cycle's stand-in model: every answer must pass the step's own schema, carry real items
// taken from the prompt, and never cite a message or memory the prompt did not show. Also covers the
// fake server's `respond` hook that plugs it in.
import { afterEach, describe, expect, it } from 'vitest';
import { createProvider } from '../../electron/llm/index.js';
import { collect, textOf } from '../../electron/llm/test-support.js';
import {
  contradictionAnswer,
  conversationHeading,
  dreamAnswer,
  lightSleepAnswer,
  memoryLine,
  mergeAnswer,
  splitAnswer,
  TASK_PREFIX,
  transcriptLine,
} from '../../electron/sleep/schemas.js';
import { namesWhose } from '../../electron/memory/store.js';
import { startFakeLlm, type FakeLlm, type FakeResponse } from './server.js';
import { answerSleepTask, findTask, sleepResponder } from './sleep-responder.js';

// Two LoCoMo-like conversations on one day and one on the next, with the line formats the steps print.
const TURNS: [string, string, string, string][] = [
  // conversation, day, speaker, text
  ['c1', '2023-05-08', 'Caroline', 'Hey Mel! Good to see you! How have you been?'],
  ['c1', '2023-05-08', 'Melanie', "Hey Caroline! I'm swamped with the kids & work. What's up with you? Anything new?"],
  ['c1', '2023-05-08', 'Caroline', 'I went to a LGBTQ support group yesterday and it was so powerful.'],
  ['c1', '2023-05-08', 'Melanie', 'Wow, that sounds amazing! What happened that was so awesome?'],
  ['c1', '2023-05-08', 'Caroline', 'The transgender stories were so inspiring! I was so happy and thankful for all the support.'],
  ['c1', '2023-05-08', 'Melanie', 'That is really cool. I love painting with my kids on weekends, it helps me relax.'],
  ['c1', '2023-05-08', 'Caroline', 'I am thinking about studying counseling so I can help people like me in Boston.'],
  ['c1', '2023-05-08', 'Melanie', 'You would be great at that. Let me know how it goes!'],
  ['c1', '2023-05-08', 'Caroline', 'Thanks, Mel. Talk soon!'],
  ['c2', '2023-05-08', 'Melanie', 'I ran a charity race last Saturday.'],
  ['c2', '2023-05-08', 'Caroline', 'That is so great, I am proud of you! I really enjoy running too, mornings by the river are my favorite.'],
  ['c3', '2023-05-09', 'Caroline', 'I have been feeling sad and lonely since my friend Jordan moved to Seattle.'],
  ['c3', '2023-05-09', 'Melanie', 'I am sorry, that sounds hard. Do you want to call her this weekend?'],
];

function lightSleepPrompt(): { prompt: string; refs: Set<string> } {
  const lines = [`${TASK_PREFIX}light-sleep`, 'Read the conversations below and answer with JSON only.', ''];
  const refs = new Set<string>();
  let heading = '';
  TURNS.forEach(([conversation, day, speaker, text], i) => {
    const h = `${conversation} ${day}`;
    if (h !== heading) {
      lines.push('', conversationHeading(conversation, `Caroline & Melanie — session ${conversation.slice(1)}`, day));
      heading = h;
    }
    const ref = `m${i + 1}`;
    refs.add(ref);
    lines.push(transcriptLine(ref, `${day} 13:${String(10 + i).padStart(2, '0')}`, speaker, text));
  });
  return { prompt: lines.join('\n'), refs };
}

const MEMORIES = [
  {
    id: 3,
    type: 'preference',
    content: 'Melanie likes painting with her kids on weekends and goes camping in summer',
    validFrom: '2023-05-08T00:00:00Z',
    validTo: null,
    createdAt: '2023-05-09T02:00:00Z',
  },
  { id: 7, type: 'world', content: 'Caroline lives in Boston with her dog', validFrom: null, validTo: null, createdAt: '2023-05-09T02:00:00Z' },
  { id: 9, type: 'world', content: 'Caroline lives in Seattle now', validFrom: '2023-06-01T00:00:00Z', validTo: null, createdAt: '2023-06-02T02:00:00Z' },
  { id: 12, type: 'experience', content: 'Melanie ran a charity race for mental health', validFrom: null, validTo: null, createdAt: '2023-05-09T02:00:00Z' },
  {
    id: 15,
    type: 'experience',
    content: 'Melanie ran a charity race for mental health last Saturday',
    validFrom: null,
    validTo: null,
    createdAt: '2023-05-10T02:00:00Z',
  },
];
const memoryIds = new Set(MEMORIES.map((m) => m.id));

function memoryPrompt(purpose: string): string {
  return [`${TASK_PREFIX}${purpose}`, 'The memories:', '', ...MEMORIES.map(memoryLine), '', 'Answer with JSON only.'].join('\n');
}

/** A request body as the OpenAI-compatible client sends it. */
const body = (prompt: string) => ({
  model: 'fake-model',
  stream: true,
  messages: [
    { role: 'system', content: 'You are the memory of a companion. Answer with JSON only.' },
    { role: 'user', content: prompt },
  ],
});

async function answer(prompt: string): Promise<unknown> {
  const reply = await sleepResponder()(body(prompt));
  expect(reply?.kind).toBe('text');
  return JSON.parse((reply as Extract<FakeResponse, { kind: 'text' }>).text);
}

describe('sleepResponder', () => {
  it('lists no weekday or month among a memory’s names, as a model would not', async () => {
    const prompt = [
      `${TASK_PREFIX}light-sleep`,
      '',
      conversationHeading('c1', 'Mara — a new cat', '2023-06-05'),
      transcriptLine('m1', '2023-06-05 18:02', 'Mara', 'I adopted a grey cat called Pixel from the shelter on Saturday, the first weekend of June.'),
    ].join('\n');
    const parsed = lightSleepAnswer.parse(await answer(prompt));
    expect(parsed.memories.map((m) => m.entities)).toEqual([['Mara', 'Pixel']]);
  });

  it('answers light sleep with memories, one anchor per conversation and day, imprints and a narrative per day', async () => {
    const { prompt, refs } = lightSleepPrompt();
    const parsed = lightSleepAnswer.parse(await answer(prompt));
    expect(parsed.memories.length).toBeGreaterThanOrEqual(3);
    expect(parsed.imprints.length).toBeGreaterThanOrEqual(3);
    expect(parsed.anchors.map((a) => `${a.conversation} ${a.day}`)).toEqual(['c1 2023-05-08', 'c2 2023-05-08', 'c3 2023-05-09']);
    expect(parsed.narratives.map((n) => n.day)).toEqual(['2023-05-08', '2023-05-09']);
    for (const ref of [...parsed.memories, ...parsed.imprints].flatMap((x) => x.sources)) expect(refs).toContain(ref);
    for (const m of parsed.memories) expect(m.sources.length).toBeGreaterThan(0);
    // Taken from what was said, not made up.
    expect(parsed.memories.some((m) => /Caroline|Melanie/.test(m.content))).toBe(true);
    expect(parsed.memories.flatMap((m) => m.entities)).toEqual(expect.arrayContaining(['LGBTQ', 'Jordan', 'Seattle']));
    expect(parsed.memories.find((m) => m.content.includes('support group'))).toMatchObject({
      type: 'experience',
      content: 'Caroline said they went to a LGBTQ support group yesterday and it was so powerful.',
      sources: ['m3'],
    });
    expect(parsed.memories.find((m) => m.content.includes('running'))).toMatchObject({
      type: 'preference',
      content: 'Caroline really enjoys running too, mornings by the river are their favorite.',
    });
    // Opinions and preferences say whose they are, as the memory store requires.
    for (const m of parsed.memories) if (m.type === 'opinion' || m.type === 'preference') expect(namesWhose(m.content)).toBe(true);
    // The sad conversation feels lower than the happy one.
    const [happy, , sad] = parsed.anchors;
    expect(happy!.valence).toBeGreaterThan(sad!.valence);
    expect(sad!.valence).toBeLessThan(0);
    for (const a of parsed.anchors) expect(a.labels.length).toBeGreaterThanOrEqual(1);
  });

  it('answers light sleep with empty lists when the prompt has no transcript', async () => {
    expect(lightSleepAnswer.parse(await answer(`${TASK_PREFIX}light-sleep\nNothing new today.`))).toEqual({
      memories: [],
      anchors: [],
      imprints: [],
      narratives: [],
    });
  });

  it('supersedes an older memory with a newer one about the same subject', async () => {
    const parsed = contradictionAnswer.parse(await answer(memoryPrompt('deep-sleep:contradictions')));
    expect(parsed.operations).toContainEqual(expect.objectContaining({ op: 'supersede', older: 7, newer: 9 }));
    for (const op of parsed.operations) if (op.op === 'supersede') expect([op.older, op.newer].every((id) => memoryIds.has(id))).toBe(true);
  });

  it('reads the subject past the "X said they" frame light sleep writes', async () => {
    const m = (id: number, content: string) =>
      memoryLine({ id, type: 'world', content, validFrom: null, validTo: null, createdAt: `2023-05-0${id}T02:00:00Z` });
    const prompt = [
      `${TASK_PREFIX}deep-sleep:contradictions`,
      m(1, 'Melanie said they live in Boston with their kids.'),
      m(2, 'Melanie said they went camping with the family last weekend.'),
      m(3, 'Melanie said they live in Seattle now.'),
    ].join('\n');
    expect(contradictionAnswer.parse(await answer(prompt)).operations).toEqual([expect.objectContaining({ op: 'supersede', older: 1, newer: 3 })]);
  });

  it('writes fewer memories when the answer would pass max_tokens', async () => {
    const { prompt } = lightSleepPrompt();
    const full = lightSleepAnswer.parse(await answer(prompt));
    const limit = Math.ceil(JSON.stringify(full).length / 4) - 40;
    const reply = (await sleepResponder()({ ...body(prompt), max_tokens: limit })) as { text: string; chunks: number };
    const fitted = lightSleepAnswer.parse(JSON.parse(reply.text));
    expect(reply.chunks).toBeLessThanOrEqual(limit);
    expect(fitted.memories.length).toBeGreaterThan(0);
    expect(fitted.memories.length).toBeLessThan(full.memories.length);
    expect(fitted.anchors).toEqual(full.anchors);
  });

  it('splits a compound memory, keeping the subject on both parts', async () => {
    const parsed = splitAnswer.parse(await answer(memoryPrompt('deep-sleep:split')));
    expect(parsed.splits).toHaveLength(1);
    expect(parsed.splits[0]!.id).toBe(3);
    expect(parsed.splits[0]!.parts.map((p) => p.content)).toEqual(['Melanie likes painting with her kids on weekends', 'Melanie goes camping in summer']);
  });

  it('merges near-duplicates', async () => {
    const parsed = mergeAnswer.parse(await answer(memoryPrompt('deep-sleep:merge')));
    expect(parsed.merges).toHaveLength(1);
    expect(parsed.merges[0]!.ids).toEqual([12, 15]);
    expect(parsed.merges[0]!.content).toBe('Melanie ran a charity race for mental health last Saturday');
  });

  it('returns no operations when nothing applies', async () => {
    const prompt = [`${TASK_PREFIX}deep-sleep:contradictions`, memoryLine(MEMORIES[1]!), memoryLine(MEMORIES[3]!)].join('\n');
    expect(contradictionAnswer.parse(await answer(prompt))).toEqual({ operations: [] });
    expect(splitAnswer.parse(await answer(prompt.replace('contradictions', 'split')))).toEqual({ splits: [] });
    expect(mergeAnswer.parse(await answer(prompt.replace('contradictions', 'merge')))).toEqual({ merges: [] });
  });

  it('dreams with words from the imprints and memories it is shown', async () => {
    const prompt = [
      `${TASK_PREFIX}dream`,
      'Tonight’s imprints:',
      '- I keep coming back to the moment Caroline said “The transgender stories were so inspiring!”',
      'Some memories:',
      ...MEMORIES.map(memoryLine),
    ].join('\n');
    const parsed = dreamAnswer.parse(await answer(prompt));
    const material = /painting|charity|transgender|stories|inspiring|camping|seattle|boston|mental|health|weekends/i;
    expect(parsed.title).toMatch(material);
    expect(parsed.body).toMatch(material);
  });

  it('answers the repeated task after a repair turn, and leaves non-sleep requests to the echo', async () => {
    const { prompt } = lightSleepPrompt();
    const repaired = {
      model: 'fake-model',
      stream: true,
      messages: [
        { role: 'user', content: [{ type: 'text', text: prompt }] },
        { role: 'assistant', content: '{"memories": [' },
        { role: 'user', content: 'That answer could not be used: it is not valid JSON. Reply again with only the JSON value.' },
      ],
    };
    expect(findTask(repaired)?.purpose).toBe('light-sleep');
    const reply = await sleepResponder()(repaired);
    expect(JSON.parse((reply as { text: string }).text)).toEqual(answerSleepTask('light-sleep', prompt));
    expect(await sleepResponder()({ model: 'fake-model', stream: true, messages: [{ role: 'user', content: 'hello there' }] })).toBeUndefined();
    expect(await sleepResponder()(undefined)).toBeUndefined();
  });

  it('answers in prose unless held to a schema (then JSON, or the forced tool), and gives the JSON on the repair turn', async () => {
    const { prompt } = lightSleepPrompt();
    const prose = sleepResponder({ schema: 'prose-then-json' });
    const plain = body(prompt) as { messages: unknown[] };
    const first = (await prose(plain)) as { kind: string; text: string };
    expect(first.kind).toBe('text');
    expect(() => JSON.parse(first.text)).toThrow();
    expect(first.text).toMatch(/^Sure! Here is what I noticed\./);
    const schema = { type: 'json_schema', json_schema: { name: 'light-sleep', schema: {}, strict: true } };
    expect(JSON.parse(((await prose({ ...plain, response_format: schema })) as { text: string }).text)).toEqual(answerSleepTask('light-sleep', prompt));
    const repair = {
      ...plain,
      messages: [...plain.messages, { role: 'user', content: 'That answer could not be used. Reply again with only the JSON value.' }],
    };
    expect(JSON.parse(((await prose(repair)) as { text: string }).text)).toEqual(answerSleepTask('light-sleep', prompt));
    const forced = { ...plain, tool_choice: { type: 'tool', name: 'light-sleep' } };
    expect(await prose(forced)).toEqual({ kind: 'tool_call', name: 'light-sleep', arguments: answerSleepTask('light-sleep', prompt) });
    // The default ignores a schema: JSON text, as before.
    expect(JSON.parse(((await sleepResponder()(forced)) as { text: string }).text)).toEqual(answerSleepTask('light-sleep', prompt));
  });

  it('is deterministic', async () => {
    const { prompt } = lightSleepPrompt();
    expect(await sleepResponder()(body(prompt))).toEqual(await sleepResponder()(body(prompt)));
  });
});

describe('fake server respond hook', () => {
  const started: FakeLlm[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((fake) => fake.close()));
  });

  it('serves sleep answers over both wire formats after a delay, scripted replies first, the echo for the rest', async () => {
    const fake = await startFakeLlm({ defaultChunkDelayMs: 0 });
    started.push(fake);
    const seen: unknown[] = [];
    const responder = sleepResponder({ delayMs: 60 });
    fake.respond = (b) => {
      seen.push(b);
      return responder(b);
    };
    const { prompt } = lightSleepPrompt();
    for (const kind of ['openai-compatible', 'anthropic'] as const) {
      const provider = createProvider({ kind, baseUrl: kind === 'anthropic' ? fake.url : fake.baseUrl });
      const begun = Date.now();
      const { events, error } = await collect(provider.stream({ model: 'fake-model', messages: [{ role: 'user', content: prompt }] }));
      expect(error).toBeUndefined();
      expect(Date.now() - begun).toBeGreaterThanOrEqual(55);
      const parsed = lightSleepAnswer.parse(JSON.parse(textOf(events)));
      expect(parsed.memories.length).toBeGreaterThan(0);
      const done = events.find((e) => e.type === 'done');
      expect(done?.type === 'done' && done.usage?.outputTokens).toBeGreaterThan(10);
    }
    expect(seen).toHaveLength(2);

    const provider = createProvider({ kind: 'openai-compatible', baseUrl: fake.baseUrl });
    fake.script({ kind: 'text', text: 'scripted wins' });
    const scripted = await collect(provider.stream({ model: 'fake-model', messages: [{ role: 'user', content: prompt }] }));
    expect(textOf(scripted.events)).toBe('scripted wins');
    expect(seen).toHaveLength(2);
    const echoed = await collect(provider.stream({ model: 'fake-model', messages: [{ role: 'user', content: 'hello there' }] }));
    expect(textOf(echoed.events)).toBe('I hear you: hello there');
    expect(seen).toHaveLength(3);
  });
});
