// Safety copies keep the pictures too, on real files and PGlite: the images attached in chat and the
// companion's pictures go into each copy as hard links (the same inode as the data folder's file) and
// count once in the sizes listed; a restore brings back an image deleted since and the old companion
// picture, keeps aside what is here now and not in the copy, refuses a copy whose picture is damaged
// or missing before anything changes, and still restores a copy that holds the database only. A copy
// into a folder on another file system gets real copies, and the next copy there links to those.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { solidPng } from '../../e2e/fake-llm/images.js';
import { IMAGE_CHUNK_BYTES, type ImageRef } from '../../shared/api/attachments.js';
import type { Host } from '../host/types.js';
import { attachmentsDir } from '../attachments/store.js';
import { avatarDir } from '../companion/avatar.js';
import { Conversations } from '../conversations/conversations.js';
import { openTestDatabase, TEST_ENGINE } from '../testing/host.js';
import { rejection } from '../testing/rejection.js';
import { useBackupHosts } from './testing/hosts.js';
import { readManifest, type CopyManifest } from './copies.js';
import { JOURNAL_FILE } from './switch.js';

const { scratch, removeAfterAll, open, close } = useBackupHosts('anima-pictures-');

async function upload(host: Host, bytes: Buffer): Promise<ImageRef> {
  let uploadId: string | undefined;
  let last;
  for (let offset = 0; offset < bytes.length; offset += IMAGE_CHUNK_BYTES) {
    last = await host.api['attachments.upload']({
      uploadId,
      size: bytes.length,
      offset,
      data: bytes.subarray(offset, offset + IMAGE_CHUNK_BYTES).toString('base64'),
    });
    uploadId = last.uploadId;
  }
  return last!.image!;
}

const dataUrl = (png: Buffer) => `data:image/png;base64,${png.toString('base64')}`;
const ls = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).sort() : []);
const ino = (file: string) => fs.statSync(file).ino;
const picturesOf = (copyFile: string) => copyFile.replace(/\.tar\.gz$/, '.files');

/** A data folder whose conversation shows an image, with a companion picture; the host is open again on it. */
async function withPictures(dataDir: string, rgb: [number, number, number]) {
  let host = await open(dataDir);
  const conversation = await host.api['conversations.create']({ title: 'the garden' });
  const image = await upload(host, solidPng(40, 30, rgb));
  const profile = await host.api['self.setAvatar']({ image: dataUrl(solidPng(16, 16, rgb)) });
  await close(host);
  // The message that shows it, written as chat.send stores it (no model needed for that).
  const db = await openTestDatabase(dataDir);
  await new Conversations(db).append({ conversationId: conversation.id, role: 'user', content: 'look at the roses', status: 'complete', images: [image] });
  await db.close();
  host = await open(dataDir);
  return { host, image, avatar: profile.avatar! };
}

describe.skipIf(TEST_ENGINE === 'postgres')('safety copies keep the pictures', () => {
  it('links the pictures into each copy, counts them once, and a restore brings back a lost image and the old companion picture', async () => {
    const dataDir = scratch();
    const { host, image, avatar } = await withPictures(dataDir, [200, 40, 40]);
    const avatarName = ls(avatarDir(dataDir))[0]!;

    const [copy] = await host.api['backups.makeNow']({ where: 'data' });
    const file = path.join(dataDir, 'backups', copy!.name);
    const pictures = picturesOf(file);
    // Hard links: the very same file as the data folder's, not a second copy of its bytes.
    expect(ino(path.join(pictures, 'attachments', image.id))).toBe(ino(path.join(attachmentsDir(dataDir), image.id)));
    expect(ino(path.join(pictures, 'companion', avatarName))).toBe(ino(path.join(avatarDir(dataDir), avatarName)));
    const manifest = readManifest(file) as CopyManifest;
    expect(manifest.files!.attachments).toEqual([{ name: image.id, bytes: image.bytes }]);
    expect(manifest.files!.companion).toEqual([expect.objectContaining({ name: avatarName, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) })]);
    // The size listed is the database file's: the pictures are the data folder's own files.
    const [second] = await host.api['backups.makeNow']({ where: 'data' });
    const listed = (await host.api['backups.list']({})).copies;
    for (const c of [copy!, second!]) {
      const l = listed.find((x) => x.id === c.id)!;
      expect(l.bytes).toBe(fs.statSync(path.join(dataDir, 'backups', c.name)).size);
      expect(l.images).toEqual({ files: 2, bytes: manifest.files!.bytes });
    }
    fs.rmSync(path.join(dataDir, 'backups', second!.name));
    fs.rmSync(picturesOf(path.join(dataDir, 'backups', second!.name)), { recursive: true });

    // Since the copy: the image file is lost, another is attached, the companion has a new face.
    fs.rmSync(path.join(attachmentsDir(dataDir), image.id));
    const later = await upload(host, solidPng(20, 20, [10, 10, 200]));
    const newFace = await host.api['self.setAvatar']({ image: dataUrl(solidPng(16, 16, [10, 10, 200])) });
    expect(newFace.avatar).not.toBe(avatar);
    // With the file gone from the data folder, the copy's link holds its bytes and is now counted.
    const lost = (await host.api['backups.list']({})).copies.find((c) => c.id === copy!.id)!;
    expect(lost.bytes).toBe(fs.statSync(file).size + image.bytes);

    const result = await host.api['backups.restore']({ id: copy!.id });
    expect(ls(attachmentsDir(dataDir))).toEqual([image.id]);
    expect((await host.api['attachments.get']({ id: image.id })).data).toBe(solidPng(40, 30, [200, 40, 40]).toString('base64'));
    expect((await host.api['self.profile']({})).avatar).toBe(avatar);
    expect(ls(avatarDir(dataDir))).toEqual([avatarName]);
    // What was here and not in the copy is kept aside with the database folder it replaced, never deleted.
    const aside = path.join(dataDir, `${result.previous}.files`);
    expect(ls(path.join(aside, 'attachments'))).toEqual([later.id]);
    expect(ls(path.join(aside, 'companion'))).toHaveLength(2);
    expect(ls(dataDir).filter((f) => f.startsWith('db.restoring-') || f === JOURNAL_FILE)).toEqual([]);
    const previous = (await host.api['backups.list']({})).copies.find((c) => c.where === 'previous')!;
    expect(previous.images).toEqual({
      files: 3,
      bytes: later.bytes + fs.readdirSync(path.join(aside, 'companion')).reduce((n, f) => n + fs.statSync(path.join(aside, 'companion', f)).size, 0),
    });

    // Undo: the folder it replaced comes back with its pictures — and the image its message shows,
    // lost there but here again now, comes along (the same content: its name is its hash).
    await host.api['backups.restore']({ id: previous.id });
    expect(ls(attachmentsDir(dataDir))).toEqual([image.id, later.id].sort());
    expect((await host.api['self.profile']({})).avatar).toBe(newFace.avatar);
    await close(host);
  }, 300_000);

  it('refuses a copy whose picture is damaged or missing before anything changes', async () => {
    const dataDir = scratch();
    const { host, image } = await withPictures(dataDir, [40, 160, 40]);
    const [copy] = await host.api['backups.makeNow']({ where: 'data' });
    const linked = path.join(picturesOf(path.join(dataDir, 'backups', copy!.name)), 'attachments', image.id);
    const good = fs.readFileSync(linked);
    await host.api['conversations.create']({ title: 'after the copy' });
    const titles = async () => (await host.api['conversations.list']({})).map((c) => c.title).sort();
    const now = await titles();
    const entries = ls(dataDir);
    const live = () => ls(attachmentsDir(dataDir));
    const liveNow = live();

    const refused = async (pattern: RegExp) => {
      const err = await rejection(host.api['backups.restore']({ id: copy!.id }), 'invalid_input');
      expect(err.message).toMatch(/cannot be restored: .+ Nothing was changed\.$/);
      expect(err.message).toMatch(pattern);
      expect(await titles()).toEqual(now);
      expect(ls(dataDir)).toEqual(entries);
      return err.message;
    };
    // Damaged: the same size, other bytes (a new file in the link's place: the data folder's stays whole).
    const bad = Buffer.from(good);
    bad[bad.length - 5] = bad[bad.length - 5]! ^ 0xff;
    fs.rmSync(linked);
    fs.writeFileSync(linked, bad);
    await refused(/1 of the pictures it holds are damaged .*\.png/);
    expect(live()).toEqual(liveNow);
    // Missing from the copy and from the data folder.
    fs.rmSync(linked);
    const keptByTheTest = path.join(scratch(), image.id);
    fs.renameSync(path.join(attachmentsDir(dataDir), image.id), keptByTheTest);
    await refused(/1 of the pictures its messages show are missing from it/);
    expect(live()).toEqual([]);
    // Missing from the copy but here, whole, under its name: the same content (the name is its hash), taken from here.
    fs.renameSync(keptByTheTest, path.join(attachmentsDir(dataDir), image.id));
    await host.api['backups.restore']({ id: copy!.id });
    expect((await host.api['attachments.get']({ id: image.id })).data).toBe(good.toString('base64'));
    await close(host);
  }, 300_000);

  it('restores an older copy that holds the database only, leaving the pictures as they are', async () => {
    const dataDir = scratch();
    const { host, image, avatar } = await withPictures(dataDir, [90, 90, 20]);
    const [copy] = await host.api['backups.makeNow']({ where: 'data' });
    const file = path.join(dataDir, 'backups', copy!.name);
    // As a copy written before copies held pictures: no folder beside it, no list in its manifest.
    fs.rmSync(picturesOf(file), { recursive: true });
    const { files: _files, ...older } = readManifest(file)!;
    fs.writeFileSync(`${file}.json`, JSON.stringify(older));
    expect((await host.api['backups.list']({})).copies.find((c) => c.id === copy!.id)!.images).toBeNull();
    const later = await upload(host, solidPng(8, 8, [1, 2, 3]));
    await host.api['backups.restore']({ id: copy!.id });
    expect(ls(attachmentsDir(dataDir))).toEqual([image.id, later.id].sort());
    expect((await host.api['self.profile']({})).avatar).toBe(avatar);
    // The folder it replaced kept no pictures of its own (they stayed where they are): "database only".
    expect((await host.api['backups.list']({})).copies.find((c) => c.where === 'previous')!.images).toBeNull();
    await close(host);
  }, 300_000);

  it('copies the pictures into a folder on another file system, then links the next copy there to them', async (ctx) => {
    const other = fs.existsSync('/dev/shm') ? fs.mkdtempSync(path.join('/dev/shm', 'anima-pictures-')) : null;
    if (!other || fs.statSync(other).dev === fs.statSync(os.tmpdir()).dev) {
      if (other) fs.rmSync(other, { recursive: true, force: true });
      ctx.skip();
      return;
    }
    removeAfterAll(other);
    const dataDir = scratch();
    const { host, image } = await withPictures(dataDir, [250, 200, 0]);
    await host.api['backups.setFolder']({ folder: other });
    const [first] = await host.api['backups.makeNow']({ where: 'folder' });
    const [second] = await host.api['backups.makeNow']({ where: 'folder' });
    const at = (c: typeof first) => path.join(picturesOf(path.join(other, c!.name)), 'attachments', image.id);
    expect(ino(at(first))).not.toBe(ino(path.join(attachmentsDir(dataDir), image.id)));
    expect(fs.readFileSync(at(first))).toEqual(fs.readFileSync(path.join(attachmentsDir(dataDir), image.id)));
    expect(ino(at(second))).toBe(ino(at(first)));
    // Counted once: the first copy listed (the newest) carries the pictures' bytes, the other none.
    const listed = (await host.api['backups.list']({})).copies.filter((c) => c.where === 'folder');
    const dump = (c: typeof first) => fs.statSync(path.join(other, c!.name)).size;
    const total = listed.reduce((n, c) => n + c.bytes, 0);
    expect(total).toBe(dump(first) + dump(second) + listed[0]!.images!.bytes);
    // And it restores from there.
    fs.rmSync(path.join(attachmentsDir(dataDir), image.id));
    await host.api['backups.restore']({ id: first!.id });
    expect(ls(attachmentsDir(dataDir))).toEqual([image.id]);
    await close(host);
    // Pictures from the other disk are copied in: without room for them, refused before anything changes.
    let asked = 0;
    const tight = await open(dataDir, { freeBytes: () => (asked++ === 0 ? 1e12 : 10 * 1024 * 1024) });
    fs.rmSync(path.join(attachmentsDir(dataDir), image.id));
    const entries = ls(dataDir);
    const err = await rejection(tight.api['backups.restore']({ id: first!.id }), 'invalid_input');
    expect(err.message).toMatch(/not enough room on the disk for its pictures: .+ Nothing was changed\.$/);
    expect(ls(dataDir)).toEqual(entries);
    expect(ls(attachmentsDir(dataDir))).toEqual([]);
    await close(tight);
  }, 300_000);
});
