// Requests every server understands: after the system turn the person speaks first, over the
// OpenAI-compatible and the Anthropic wire alike — through the real host, the real clients and the
// loopback fake server that records what it was sent.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Message, ProviderKind } from '../../shared/api.js';
import { startFakeLlm, type FakeLlm } from '../../e2e/fake-llm/server.js';
import { nextEvent, startTestHost } from '../testing/host.js';
import { PATIENCE_MS } from '../testing/patience.js';
import type { Host } from '../host/types.js';

let fake: FakeLlm;
const hosts: Host[] = [];
beforeAll(async () => {
  fake = await startFakeLlm({ defaultChunkDelayMs: 0 });
});
afterAll(async () => {
  await fake.close();
});
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
  fake.reset();
  fake.respond = undefined;
});

async function turn(host: Host, conversationId: string, content: string): Promise<Message> {
  const finished = nextEvent(host, 'chat.finished', (p: { conversationId: string }) => p.conversationId === conversationId);
  await host.api['chat.send']({ conversationId, content });
  return ((await finished) as { message: Message }).message;
}

interface Body {
  system?: string | { text: string }[];
  messages: { role: string; content: unknown; name?: string }[];
}
const textOf = (content: unknown) => (typeof content === 'string' ? content : JSON.stringify(content));

/** About 400 estimated tokens, numbered. */
const longTurn = (i: number) => `Turn ${i} begins. ${'The garden path winds past the old stone wall and the pear tree. '.repeat(25)}Turn ${i} ends.`;

describe('the person speaks first', () => {
  for (const kind of ['openai-compatible', 'anthropic'] as ProviderKind[]) {
    it(`${kind}: a history trimmed to a reply, and passive recall on a first message, never lead the list`, async () => {
      const host = await startTestHost({ providerTimeoutMs: PATIENCE_MS });
      hosts.push(host);
      await host.api['providers.save']({
        kind,
        name: 'Fake',
        baseUrl: kind === 'anthropic' ? fake.url : fake.baseUrl,
        model: 'fake-model',
        apiKey: 'test-key',
        contextTokens: 2048,
      });
      fake.respond = () => ({ kind: 'text', text: 'Noted, and I am listening.' });
      const chatPath = kind === 'anthropic' ? '/v1/messages' : '/v1/chat/completions';
      const sentFor = (text: string) =>
        fake.requests
          .filter((r) => r.path === chatPath)
          .map((r) => r.body as Body)
          .filter((b) => textOf(b.messages.at(-1)?.content).includes(text))
          .at(-1)!;
      const firstRole = (body: Body) => (kind === 'anthropic' ? body.messages[0]!.role : body.messages[1]!.role);
      const systemText = (body: Body) => (kind === 'anthropic' ? textOf(body.system) : textOf(body.messages[0]!.content));

      // Passive recall before the very first message would lead: it rides at the end of the system turn.
      const { memory } = await host.api['memories.create']({ type: 'world', content: 'Sam’s sister Mara lives in Lisbon and works as a nurse.' });
      const { id } = await host.api['conversations.create']({});
      const first = 'Where does my sister Mara live these days?';
      expect((await turn(host, id, first)).status).toBe('complete');
      const opening = sentFor(first);
      if (kind !== 'anthropic') expect(opening.messages[0]!.role).toBe('system');
      expect(firstRole(opening)).toBe('user');
      expect(opening.messages).toHaveLength(kind === 'anthropic' ? 1 : 2);
      expect(systemText(opening)).toContain(`[[anima:${memory.id}]]`);

      // Long messages with short replies: the window keeps the newest message and the reply before
      // it, but not that reply's question — the reply is left out rather than lead the list.
      for (let i = 1; i <= 4; i++) expect((await turn(host, id, longTurn(i))).status).toBe('complete');
      const trimmed = sentFor('Turn 4 ends.');
      expect(firstRole(trimmed)).toBe('user');
      if (kind !== 'anthropic') expect(trimmed.messages[0]!.role).toBe('system');
      const sent = trimmed.messages.map((m) => textOf(m.content)).join('\n');
      expect(sent).not.toContain('Turn 1 begins');
      expect(sent).toContain('Turn 4 begins');
    }, 120_000);
  }
});
