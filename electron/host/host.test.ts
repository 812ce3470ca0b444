// The host end to end in-process: real PGlite on disk, real API, no provider needed here.
import { afterEach, describe, expect, it } from 'vitest';
import type { Message } from '../../shared/api.js';
import { nextEvent, openTestDatabase, startTestHost, tempDataDir } from '../testing/host.js';
import type { Host } from './types.js';
import { rejection } from '../testing/rejection.js';

const hosts: Host[] = [];
async function start(dataDir = tempDataDir()) {
  const host = await startTestHost({ dataDir });
  hosts.push(host);
  return host;
}
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
});

describe('host', () => {
  it('starts with defaults: six self blocks, sleep time 02:00, not onboarded', async () => {
    const host = await start();
    const settings = await host.api['settings.get']({});
    expect(settings).toMatchObject({ sleepTime: '02:00', onboarded: false, chatProviderId: null, language: 'system' });
    const blocks = await host.api['self.list']({});
    expect(blocks.map((b) => b.key)).toEqual(['identity', 'personality', 'values', 'relationship', 'voice', 'narrative']);
    expect(blocks.every((b) => b.isDefault && b.content.length > 40)).toBe(true);
    const info = await host.api['app.info']({});
    expect(info.secretStorage).toBe('owner-only-file');
    expect(info.sleepDay).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it('validates every payload and names the bad field', async () => {
    const host = await start();
    const err = await rejection(host.call('conversations.rename', { id: 'x', title: 42 }));
    expect(err.code).toBe('invalid_input');
    expect(err.field).toBe('title');
    const extra = await rejection(host.call('settings.update', { theme: 'dark', evil: true }));
    expect(extra.code).toBe('invalid_input');
    const time = await rejection(host.call('settings.update', { sleepTime: '25:00' }));
    expect(time.field).toBe('sleepTime');
    const zone = await rejection(host.call('settings.update', { timeZone: 'Mars/Olympus' }));
    expect(zone.field).toBe('timeZone');
    const unknown = await rejection(host.call('drop.everything', {}));
    expect(unknown.code).toBe('unknown_method');
    const tooLong = await rejection(host.call('chat.send', { conversationId: 'c', content: 'x'.repeat(200_001) }));
    expect(tooLong.field).toBe('content');
  });

  it('stores the message before any model call, and explains when no model is connected', async () => {
    const host = await start();
    const conv = await host.api['conversations.create']({});
    const finished = nextEvent(host, 'chat.finished');
    const sent = await host.api['chat.send']({ conversationId: conv.id, content: 'Hello, are you there?' });
    expect(sent.userMessage).toMatchObject({ role: 'user', content: 'Hello, are you there?', status: 'complete' });
    const { message } = (await finished) as { message: Message };
    expect(message.status).toBe('error');
    expect(message.error?.code).toBe('no_provider');
    const { conversation, messages } = await host.api['conversations.get']({ id: conv.id });
    expect(conversation.title).toBe('Hello, are you there?');
    expect(messages.map((m) => [m.role, m.status])).toEqual([
      ['user', 'complete'],
      ['assistant', 'error'],
    ]);
  });

  it('keeps conversations across a restart', async () => {
    const dataDir = tempDataDir();
    const first = await start(dataDir);
    const conv = await first.api['conversations.create']({ title: 'Garden plans' });
    const done = nextEvent(first, 'chat.finished');
    await first.api['chat.send']({ conversationId: conv.id, content: 'Tomatoes go in after the last frost.' });
    await done;
    await first.close();
    hosts.splice(hosts.indexOf(first), 1);

    const second = await start(dataDir);
    const list = await second.api['conversations.list']({});
    expect(list.map((c) => c.title)).toEqual(['Garden plans']);
    const { messages } = await second.api['conversations.get']({ id: conv.id });
    expect(messages[0]!.content).toBe('Tomatoes go in after the last frost.');
  });

  it('renames, archives and searches conversations by title and content', async () => {
    const host = await start();
    const a = await host.api['conversations.create']({});
    const b = await host.api['conversations.create']({});
    await host.api['conversations.rename']({ id: a.id, title: 'Trip to Lisbon' });
    const done = nextEvent(host, 'chat.finished');
    await host.api['chat.send']({ conversationId: b.id, content: 'My sister Mara adopted a cat called 50% Pepper.' });
    await done;

    expect((await host.api['conversations.list']({ query: 'lisbon' })).map((c) => c.id)).toEqual([a.id]);
    const byContent = await host.api['conversations.list']({ query: 'mara' });
    expect(byContent.map((c) => c.id)).toEqual([b.id]);
    expect(byContent[0]!.matchSnippet).toContain('Mara');
    // LIKE wildcards are literal text.
    expect((await host.api['conversations.list']({ query: '50%' })).map((c) => c.id)).toEqual([b.id]);
    expect(await host.api['conversations.list']({ query: '5_%' })).toEqual([]);

    await host.api['conversations.archive']({ id: a.id, archived: true });
    expect((await host.api['conversations.list']({})).map((c) => c.id)).toEqual([b.id]);
    expect((await host.api['conversations.list']({ archived: true })).map((c) => c.id)).toEqual([a.id]);
    const missing = await rejection(host.api['conversations.get']({ id: 'nope' }));
    expect(missing.code).toBe('not_found');
  });

  it('edits and resets self blocks', async () => {
    const host = await start();
    const edited = await host.api['self.update']({ key: 'voice', content: 'I speak like a lighthouse keeper.' });
    expect(edited).toMatchObject({ key: 'voice', isDefault: false, content: 'I speak like a lighthouse keeper.' });
    const reset = await host.api['self.reset']({ key: 'voice' });
    expect(reset.isDefault).toBe(true);
  });

  it('resets a corrupted settings row to its default and says so', async () => {
    const dataDir = tempDataDir();
    const db = await openTestDatabase(dataDir);
    await db.query(`INSERT INTO settings (key, value) VALUES ('theme', '"purple"'), ('sleepTime', '"23:30"')`);
    await db.close();
    const host = await start(dataDir);
    const settings = await host.api['settings.get']({});
    expect(settings.theme).toBe('system');
    expect(settings.sleepTime).toBe('23:30');
    const info = await host.api['app.info']({});
    expect(info.notices).toEqual(['The setting “theme” was unreadable and has been reset to its default.']);
  });

  it('refuses a second host on the same data folder', async () => {
    const dataDir = tempDataDir();
    await start(dataDir);
    const err = await rejection(startTestHost({ dataDir }));
    expect(err.code).toBe('data_dir_locked');
  });

  it('keeps API keys out of the database', async () => {
    const host = await start();
    const saved = await host.api['providers.save']({
      kind: 'openai-compatible',
      name: 'Remote',
      baseUrl: 'http://127.0.0.1:9/v1',
      model: 'm',
      apiKey: 'sk-test-secret-value-123',
    });
    expect(saved.hasApiKey).toBe(true);
    expect((await host.api['settings.get']({})).chatProviderId).toBe(saved.id);
    await host.close();
    hosts.length = 0;
    const db = await openTestDatabase(host.dataDir);
    const dump = JSON.stringify((await db.query('SELECT * FROM providers')).rows) + JSON.stringify((await db.query('SELECT * FROM settings')).rows);
    await db.close();
    expect(dump).not.toContain('sk-test-secret-value-123');
    const bad = await rejection(
      startTestHost().then((h) => {
        hosts.push(h);
        return h.api['providers.save']({ kind: 'openai-compatible', name: 'x', baseUrl: 'ftp://a', model: 'm' });
      }),
    );
    expect(bad.field).toBe('baseUrl');
  });
});
