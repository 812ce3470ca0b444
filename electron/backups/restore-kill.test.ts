// The restore drill: a host in its own process restoring a copy is killed with SIGKILL at each named
// point of the restore (testing/restore-child.ts, backups/pause.ts), then the folder is opened again
// with createHost as the next launch would. It must hold either the old data, intact and usable, or
// the whole restored copy — never a mix, never nothing — and no half-made folder may be left. The
// pictures (images attached in chat, the companion's picture) count as the data too.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { solidPng } from '../../e2e/fake-llm/images.js';
import { attachmentsDir } from '../attachments/store.js';
import type { PausePoint } from './pause.js';
import type { Host } from '../host/types.js';
import { spawnScript, type ScriptChild } from '../testing/child.js';
import { startTestHost, tempDataDir } from '../testing/host.js';
import { JOURNAL_FILE } from './switch.js';

const CHILD = path.join(import.meta.dirname, 'testing', 'restore-child.ts');
/** Child processes boot tsx and PGlite, several at once on a small machine: their waits are long. */
const CHILD_WAIT_MS = 300_000;

const dirs: string[] = [];
const scratch = (prefix: string) => {
  const d = tempDataDir(prefix);
  dirs.push(d);
  return d;
};

function spawnChild(dataDir: string, copyId: string, pauseAt: PausePoint | null): ScriptChild {
  return spawnScript(CHILD, [dataDir, copyId], { env: { ANIMA_RESTORE_PAUSE_AT: pauseAt ?? '' }, waitMs: CHILD_WAIT_MS });
}

/** What a person would notice, plus every memory's status: equal states are the same data. */
async function state(host: Host) {
  const chats = (await host.api['conversations.list']({})).map((c) => c.title).sort();
  const memories = (await host.api['memories.list']({ statuses: ['active', 'expired', 'superseded'] })).items.map((m) => `${m.status} ${m.content}`).sort();
  const identity = (await host.api['self.list']({})).find((b) => b.key === 'identity')!.content;
  const pictures = fs.existsSync(attachmentsDir(host.dataDir)) ? fs.readdirSync(attachmentsDir(host.dataDir)).sort() : [];
  const avatar = (await host.api['self.profile']({})).avatar;
  return { chats, memories, identity, pictures, avatar };
}

/** An image attached (uploaded in one chunk) and a companion picture, both of one colour. */
async function pictures(host: Host, rgb: [number, number, number]) {
  const image = solidPng(12, 12, rgb);
  await host.api['attachments.upload']({ size: image.length, offset: 0, data: image.toString('base64') });
  await host.api['self.setAvatar']({ image: `data:image/png;base64,${solidPng(16, 16, rgb).toString('base64')}` });
}

type State = Awaited<ReturnType<typeof state>>;

let fixture: string;
let copyId: string;
let copied: State;
let current: State;
const hosts: Host[] = [];

beforeAll(async () => {
  // A data folder with a copy made early on, and a good deal changed since.
  fixture = scratch('anima-restore-drill-');
  const host = await startTestHost({ dataDir: fixture, sleep: { tickMs: 0 }, backups: { tickMs: 0 } });
  await host.api['conversations.create']({ title: 'the first week' });
  await host.api['memories.create']({ type: 'world', content: 'The person has a cat called Miso.' });
  await host.api['self.update']({ key: 'identity', content: 'I am the companion as it was in the first week.' });
  await pictures(host, [200, 30, 30]);
  copied = await state(host);
  const [copy] = await host.api['backups.makeNow']({ where: 'data' });
  copyId = copy!.id;
  for (const title of ['the second week', 'the third week']) await host.api['conversations.create']({ title });
  const miso = (await host.api['memories.list']({})).items[0]!;
  await host.api['memories.forget']({ id: miso.id });
  await host.api['memories.create']({ type: 'world', content: 'The person moved to Lisbon.' });
  await host.api['self.update']({ key: 'identity', content: 'I am the companion as it is now.' });
  await pictures(host, [30, 30, 200]);
  current = await state(host);
  expect(current.pictures).toHaveLength(2);
  expect(copied.pictures).toHaveLength(1);
  await host.close();
}, 180_000);

afterAll(async () => {
  await Promise.all(hosts.map((h) => h.close().catch(() => {})));
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/**
 * Each point, and what the next launch must find: before the journal the old data (the switch never
 * began); once the old folder was renamed away, the restored copy (the switch is finished at start).
 */
const POINTS: [PausePoint, 'old' | 'restored'][] = [
  ['unpacked', 'old'],
  ['verified', 'old'],
  ['safety-copy', 'old'],
  ['journal-written', 'old'],
  ['files-aside', 'old'],
  ['between-renames', 'restored'],
  ['files-in', 'restored'],
  ['renamed', 'restored'],
];

describe('kill -9 in the middle of a restore', () => {
  const children: ScriptChild[] = [];

  afterAll(async () => {
    await Promise.all(children.map((c) => c.kill()));
  });

  // One at a time: a child boots tsx and PGlite, and the machine running the tests may be busy.
  it.each(POINTS)(
    'killed at %s: the next launch finds the %s data, whole and usable',
    async (point, expected) => {
      const dir = scratch(`anima-restore-kill-${point}-`);
      fs.cpSync(fixture, dir, { recursive: true });
      const child = spawnChild(dir, copyId, point);
      children.push(child);
      await child.waitFor(new RegExp(`^restore-paused ${point}$`));
      await child.kill();

      const host = await startTestHost({ dataDir: dir, sleep: { tickMs: 0 }, backups: { tickMs: 0 } });
      hosts.push(host);
      const found = await state(host);
      expect(found).toEqual(expected === 'old' ? current : copied);
      // No half-made folder or journal is left; the data a finished switch replaced is kept whole.
      const entries = fs.readdirSync(dir);
      expect(entries.filter((e) => e.startsWith('db.restoring-') || e === JOURNAL_FILE)).toEqual([]);
      const previous = entries.filter((e) => e.startsWith('db.before-restore-') && !e.endsWith('.json') && !e.endsWith('.files'));
      expect(previous).toHaveLength(expected === 'old' ? 0 : 1);
      // Usable: a write and a read; and a restore can be run again to the end.
      await host.api['conversations.create']({ title: 'written after the kill' });
      expect((await host.api['conversations.list']({})).map((c) => c.title)).toContain('written after the kill');
      if (expected === 'restored') {
        // The restore itself can be undone from the folder it replaced: the old data comes back.
        const back = (await host.api['backups.list']({})).copies.find((c) => c.where === 'previous')!;
        await host.api['backups.restore']({ id: back.id });
        expect(await state(host)).toEqual(current);
      } else {
        await host.api['backups.restore']({ id: copyId });
        expect(await state(host)).toEqual(copied);
      }
      await host.close();
      hosts.splice(hosts.indexOf(host), 1);
    },
    CHILD_WAIT_MS + 180_000,
  );
});
