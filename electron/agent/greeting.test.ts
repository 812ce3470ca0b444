// The companion speaks first, on real PGlite with the loopback model: after a good night once (a
// real reply drawn from the night, stored, remembered across a restart), never after a failed night,
// never when the night left nothing new, never with the switch off, never after the person spoke
// since the night, and two asks at once give one message.
import { describe, expect, it } from 'vitest';
import { findTask } from '../../e2e/fake-llm/sleep-responder.js';
import type { ApiEvents, Memory, Message } from '../../shared/api.js';
import { nextEvent } from '../testing/host.js';
import type { Host } from '../host/types.js';
import {
  closeHost,
  connect,
  copyOf,
  day,
  fake,
  longDir,
  messagesOf,
  model,
  night,
  openHost,
  type Opened,
  say,
  seedDir,
  talk,
  useCycleHarness,
} from '../sleep/testing/cycle-harness.js';

useCycleHarness();

const MORNING = 'Good morning! I kept thinking about Joana moving to Porto — will you plan a visit?';

/** The fake's chat answer (no sleep task) is the morning message; sleep tasks go to the responder. */
function morningModel() {
  model.reset();
  const sleep = model.answer;
  model.answer = (body) => (findTask(body) ? sleep(body) : { kind: 'text', text: MORNING, chunks: 3 });
}

async function greeted(host: Host, conversationId: string): Promise<Message> {
  const done = nextEvent(host, 'chat.finished', (p: ApiEvents['chat.finished']) => p.conversationId === conversationId, 30_000);
  const r = await host.api['self.greet']({});
  expect(r.skipped).toBeNull();
  expect(r.conversationId).toBe(conversationId);
  const { message } = (await done) as ApiEvents['chat.finished'];
  expect(message.id).toBe(r.message!.id);
  return message;
}

/** The chat requests the fake saw (not the night's background calls). */
function chatRequests() {
  return fake.requests.filter((r) => r.body && !findTask(r.body));
}

/** Opens a copy of the long talk connected to the fake, hands `body` the host and its one conversation, and closes the host after. */
async function onLongTalk(body: (o: Opened, conversationId: string) => Promise<void>): Promise<void> {
  const o = await openHost(copyOf(longDir));
  try {
    await connect(o.host);
    const [conv] = await o.host.api['conversations.list']({});
    await body(o, conv!.id);
  } finally {
    await closeHost(o);
  }
}

describe('the companion speaks first', () => {
  it('after a good night, once a sleep day: a real reply drawn from the night, kept across a restart', async () => {
    morningModel();
    const dir = copyOf(longDir);
    let o = await openHost(dir);
    try {
      await connect(o.host);
      const [conv] = await o.host.api['conversations.list']({});
      // Before any night: nothing to say.
      expect((await o.host.api['self.greet']({})).skipped).toBe('no_night');
      const { run } = await night(o.host);
      expect(run.status).toBe('done');
      fake.requests.length = 0;
      const message = await greeted(o.host, conv!.id);
      expect(message).toMatchObject({ role: 'assistant', status: 'complete', content: MORNING });
      // One chat request: the usual system prompt, the conversation, then the note with the night in it (never stored).
      const [req] = chatRequests();
      const turns = (req!.body as { messages: { role: string; content: string }[] }).messages;
      expect(turns[0]!.role).toBe('system');
      expect(turns[0]!.content).toContain('I am Anima');
      const note = turns.at(-1)!;
      expect(note.role).toBe('user');
      expect(note.content).toContain('they just opened the app');
      expect(note.content).toMatch(/While I slept I/);
      expect(note.content).toMatch(/Joana|Porto|Cascais|lighthouse/);
      // No remember tool in a turn no words of the person's started.
      const tools = (req!.body as { tools?: { function: { name: string } }[] }).tools ?? [];
      expect(tools.map((t) => t.function.name)).not.toContain('remember');
      const stored = await messagesOf(o.host, conv!.id);
      expect(stored.at(-1)).toMatchObject({ id: message.id, role: 'assistant', content: MORNING });
      expect(stored.some((m) => m.content.includes('they just opened the app'))).toBe(false);

      // Asked again (focus, a second window, a restart): no second message.
      expect((await o.host.api['self.greet']({})).skipped).toBe('greeted');
      await closeHost(o);
      o = await openHost(dir);
      expect((await o.host.api['self.greet']({})).skipped).toBe('greeted');
      // The next sleep day, with no night since: nothing again (the same night is not greeted twice).
      o.clock.now = new Date(o.clock.now.getTime() + 24 * 3600_000);
      expect((await o.host.api['self.greet']({})).skipped).toBe('greeted');
      expect((await messagesOf(o.host, conv!.id)).filter((m) => m.content === MORNING)).toHaveLength(1);
    } finally {
      await closeHost(o);
    }
  });

  it("tells of the night's memories as they stand now: not one forgotten since, and a corrected one as corrected", async () => {
    morningModel();
    await onLongTalk(async (o, conversationId) => {
      await night(o.host);
      const { items } = await o.host.api['memories.list']({ limit: 200 });
      const written = items.filter((m) => m.source === 'light-sleep' || m.source === 'deep-sleep');
      expect(written.length).toBeGreaterThanOrEqual(2);
      const [forgotten, corrected] = written as [Memory, Memory];
      await o.host.api['memories.forget']({ id: forgotten.id });
      const correction = 'Joana moved to Braga in the end, not to Porto.';
      await o.host.api['memories.update']({ id: corrected.id, content: correction });
      fake.requests.length = 0;
      await greeted(o.host, conversationId);
      const turns = (chatRequests()[0]!.body as { messages: { role: string; content: string }[] }).messages;
      const note = turns.at(-1)!.content;
      expect(note).toContain('What I kept from our days:');
      expect(note).toContain(`- ${correction}`);
      expect(note).not.toContain(forgotten.content.trim());
      expect(note).not.toContain(corrected.content.trim());
    });
  });

  it('two asks at once give one message', async () => {
    morningModel();
    await onLongTalk(async (o, conversationId) => {
      await night(o.host);
      const done = nextEvent(o.host, 'chat.finished', (p: ApiEvents['chat.finished']) => p.conversationId === conversationId, 30_000);
      const [a, b] = await Promise.all([o.host.api['self.greet']({}), o.host.api['self.greet']({})]);
      await done;
      expect(a.message?.id).toBeTruthy();
      expect(b.message?.id === a.message?.id || b.skipped === 'greeted').toBe(true);
      expect((await o.host.api['self.greet']({})).skipped).toBe('greeted');
      expect((await messagesOf(o.host, conversationId)).filter((m) => m.content === MORNING)).toHaveLength(1);
    });
  });

  it('not after a failed night', async () => {
    morningModel();
    const sleep = model.answer;
    // A background model too small for the task: prose instead of the answers asked for.
    model.answer = (body) => (findTask(body) ? { kind: 'text', text: 'Sure! Here is a summary of your day.', chunks: 2 } : sleep(body));
    await onLongTalk(async (o, conversationId) => {
      const before = (await messagesOf(o.host, conversationId)).length;
      const { run } = await night(o.host);
      expect(run.status).toBe('failed');
      expect((await o.host.api['self.greet']({})).skipped).toBe('night_failed');
      expect(await messagesOf(o.host, conversationId)).toHaveLength(before);
    });
  });

  it('not when the night had nothing new', async () => {
    morningModel();
    await onLongTalk(async (o, conversationId) => {
      await night(o.host);
      // A second night the same day, with nothing said since: it writes nothing, and the first one was greeted by nobody yet.
      const second = await night(o.host);
      expect(second.run.status).toBe('done');
      expect((await o.host.api['self.greet']({})).skipped).toBe('nothing_new');
      expect((await messagesOf(o.host, conversationId)).some((m) => m.content === MORNING)).toBe(false);
    });
  });

  it('not with the switch off, nor after the person spoke since the night', async () => {
    morningModel();
    await onLongTalk(async (o, conversationId) => {
      await night(o.host);
      const settings = await o.host.api['settings.update']({ companion: { greeting: false } });
      expect(settings.companion.greeting).toBe(false);
      expect((await o.host.api['self.greet']({})).skipped).toBe('off');
      expect((await messagesOf(o.host, conversationId)).some((m) => m.content === MORNING)).toBe(false);
      await o.host.api['settings.update']({ companion: { greeting: true } });
      o.clock.now = new Date(o.clock.now.getTime() + 60_000);
      await say(o.host, conversationId, 'Morning! I am up early today.');
      const count = (await messagesOf(o.host, conversationId)).length;
      expect((await o.host.api['self.greet']({})).skipped).toBe('talked_since');
      expect(await messagesOf(o.host, conversationId)).toHaveLength(count);
    });
  });

  it('not about a night older than last night', async () => {
    morningModel();
    const { dir } = await seedDir(({ conversations }) => talk(conversations, 'Old talk', day(-1), [{ who: 'Mara', text: 'My sister Ines visits in May.' }]));
    const o = await openHost(dir);
    try {
      await connect(o.host);
      await night(o.host);
      o.clock.now = new Date(o.clock.now.getTime() + 3 * 24 * 3600_000);
      expect((await o.host.api['self.greet']({})).skipped).toBe('no_night');
    } finally {
      await closeHost(o);
    }
  });
});
