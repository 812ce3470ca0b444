// A turn off the record: the companion may look its memory up, but nothing said there becomes
// memory — not even through its own remember tool. Host + on-disk PGlite + real client + fake server.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Message } from '../../shared/api.js';
import { startFakeLlm, type FakeLlm } from '../../e2e/fake-llm/server.js';
import { nextEvent, startTestHost } from '../testing/host.js';
import { PATIENCE_MS } from '../testing/patience.js';
import type { Host } from '../host/types.js';

let fake: FakeLlm;
const hosts: Host[] = [];
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake.close();
});
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
  fake.reset();
});

async function turn(host: Host, conversationId: string, content: string): Promise<Message> {
  const finished = nextEvent(host, 'chat.finished', (p: { conversationId: string }) => p.conversationId === conversationId);
  await host.api['chat.send']({ conversationId, content });
  return ((await finished) as { message: Message }).message;
}

const toolNames = () =>
  fake.requests
    .filter((r) => r.path.endsWith('/chat/completions'))
    .map((r) => ((r.body as { tools?: { function: { name: string } }[] }).tools ?? []).map((t) => t.function.name));

describe('off the record', () => {
  it('offers no remember tool, so a model that calls it anyway saves nothing; on the record it is offered again', async () => {
    const host = await startTestHost({ providerTimeoutMs: PATIENCE_MS });
    hosts.push(host);
    await host.api['providers.save']({ kind: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, model: 'fake-model' });
    const { id } = await host.api['conversations.create']({ offRecord: true });

    fake.script({
      kind: 'tool_call',
      name: 'remember',
      arguments: { action: 'save', type: 'world', content: 'Sam is planning a surprise party for Mara.' },
      thenText: 'Your secret is safe.',
    });
    const reply = await turn(host, id, 'I am planning a surprise party for Mara. Keep it between us.');
    expect(reply.content).toBe('Your secret is safe.');
    const offered = toolNames();
    expect(offered[0]).not.toContain('remember');
    expect(offered[0]!.length).toBeGreaterThan(0); // looking things up still works
    expect((await host.api['memories.list']({})).items).toEqual([]);

    await host.api['conversations.setOffRecord']({ id, offRecord: false });
    fake.requests.length = 0;
    fake.script({ kind: 'text', text: 'Noted.' });
    await turn(host, id, 'Back on the record now.');
    expect(toolNames()[0]).toContain('remember');
  });
});
