// The erase drill: a host in its own process erasing everything is killed with SIGKILL at each named
// point (testing/erase-child.ts; the pause points of backups/erase.ts and of the folder switch it
// shares with restore), then the folder is opened again with createHost as the next launch would. It
// must hold either the old data, whole and usable, or a fresh companion with nothing of the old left
// in the folder — never a mix.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { LOCK_FILE } from '../db/lock.js';
import type { Host } from '../host/types.js';
import { spawnScript, type ScriptChild } from '../testing/child.js';
import { startTestHost, tempDataDir } from '../testing/host.js';

const CHILD = path.join(import.meta.dirname, 'testing', 'erase-child.ts');
/** Child processes boot tsx and PGlite on a small, shared machine: their waits are long. */
const CHILD_WAIT_MS = 300_000;
const KEY = 'sk-erase-drill-3f9a1c7e5b2d4f6a8c0e1a3b5d7f9e2c';

const dirs: string[] = [];
const scratch = (prefix: string) => {
  const d = tempDataDir(prefix);
  dirs.push(d);
  return d;
};

function spawnChild(dataDir: string, pauseAt: string): ScriptChild {
  return spawnScript(CHILD, [dataDir, inject('dbTemplatePath')], { env: { ANIMA_RESTORE_PAUSE_AT: pauseAt }, waitMs: CHILD_WAIT_MS });
}

/** What a person would notice. */
async function state(host: Host) {
  const chats = (await host.api['conversations.list']({})).map((c) => c.title).sort();
  const memories = (await host.api['memories.list']({})).items.map((m) => m.content).sort();
  const providers = (await host.api['providers.list']({})).map((p) => p.name);
  const onboarded = (await host.api['settings.get']({})).onboarded;
  return { chats, memories, providers, onboarded };
}

const FRESH = { chats: [], memories: [], providers: [], onboarded: false };
let fixture: string;
let old: Awaited<ReturnType<typeof state>>;
let oldEntries: string[];
const hosts: Host[] = [];

beforeAll(async () => {
  fixture = scratch('anima-erase-drill-');
  const host = await startTestHost({ dataDir: fixture, sleep: { tickMs: 0 }, backups: { tickMs: 0 } });
  await host.api['settings.update']({ onboarded: true });
  await host.api['conversations.create']({ title: 'the first week' });
  await host.api['memories.create']({ type: 'world', content: 'The person has a cat called Miso.' });
  await host.api['providers.save']({ kind: 'openai-compatible', name: 'Cloud', baseUrl: 'https://api.example.test/v1', model: 'gpt-x', apiKey: KEY });
  await host.api['backups.makeNow']({ where: 'data' });
  old = await state(host);
  await host.close();
  oldEntries = fs.readdirSync(fixture).sort();
  expect(oldEntries).toEqual(expect.arrayContaining(['backups', 'db', 'secrets-browser.json']));
}, 180_000);

afterAll(async () => {
  await Promise.all(hosts.map((h) => h.close().catch(() => {})));
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** Each point, and what the next launch must find: before the old folder is renamed away the old data; after it, the fresh. */
const POINTS: [string, 'old' | 'fresh'][] = [
  ['erase-fresh', 'old'],
  ['journal-written', 'old'],
  ['between-renames', 'fresh'],
  ['renamed', 'fresh'],
  ['erase-deleting', 'fresh'],
];

describe('kill -9 in the middle of an erase', () => {
  const children: ScriptChild[] = [];

  afterAll(async () => {
    await Promise.all(children.map((c) => c.kill()));
  });

  it.each(POINTS)(
    'killed at %s: the next launch finds the %s data, and nothing of the other',
    async (point, expected) => {
      const dir = scratch(`anima-erase-kill-${point}-`);
      fs.cpSync(fixture, dir, { recursive: true });
      const child = spawnChild(dir, point);
      children.push(child);
      await child.waitFor(new RegExp(`^restore-paused ${point}$`));
      await child.kill();

      const host = await startTestHost({ dataDir: dir, sleep: { tickMs: 0 }, backups: { tickMs: 0 } });
      hosts.push(host);
      expect(await state(host)).toEqual(expected === 'old' ? old : FRESH);
      const entries = fs.readdirSync(dir).sort();
      if (expected === 'old') {
        // Everything as it was (the lock is taken again), no half-made folder or journal left.
        expect(entries).toEqual([...oldEntries, LOCK_FILE].sort());
        expect((await host.api['backups.list']({})).copies).toHaveLength(1);
      } else {
        expect(entries).toEqual(['db', LOCK_FILE].sort());
      }
      // Usable either way: a write and a read.
      await host.api['conversations.create']({ title: 'written after the kill' });
      expect((await host.api['conversations.list']({})).map((c) => c.title)).toContain('written after the kill');
      await host.close();
      hosts.splice(hosts.indexOf(host), 1);
    },
    CHILD_WAIT_MS + 180_000,
  );
});
