// Attached images in Anima's own archive: the export's zip carries each image a kept message refers
// to (attachments/<id>, the bytes as the data folder keeps them; anima.json's messages hold the
// references), and importing that zip into another folder brings the files back, so the pictures show;
// the companion's picture (companion/<name>) the same way.
import fs from 'node:fs';
import path from 'node:path';
import { unzipSync } from 'fflate';
import { afterAll, describe, expect, it } from 'vitest';
import { IMAGE_CHUNK_BYTES, IMPORT_CHUNK_BYTES, type ImportProgress } from '../../shared/api.js';
import { solidPng } from '../../e2e/fake-llm/images.js';
import { exportFolder } from '../archive/export-folder.js';
import type { Host } from '../host/types.js';
import { nextEvent, startTestHost, tempDataDir } from '../testing/host.js';
import { attachmentsDir } from './store.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

async function uploadImage(h: Host, bytes: Buffer) {
  let uploadId: string | undefined;
  let last;
  for (let offset = 0; offset < bytes.length; offset += IMAGE_CHUNK_BYTES) {
    last = await h.api['attachments.upload']({
      uploadId,
      size: bytes.length,
      offset,
      data: bytes.subarray(offset, offset + IMAGE_CHUNK_BYTES).toString('base64'),
    });
    uploadId = last.uploadId;
  }
  return last!.image!;
}

describe('images in the archive', () => {
  it('are exported beside anima.json and come back with an import', async () => {
    const source = tempDataDir('anima-images-src-');
    dirs.push(source);
    const picture = solidPng(48, 32, [30, 90, 200]);
    let host = await startTestHost({ dataDir: source });
    const image = await uploadImage(host, picture);
    const { id } = await host.api['conversations.create']({});
    // No model is connected: the reply fails, the person's message and its picture are kept.
    const finished = nextEvent(host, 'chat.finished', (p: { conversationId: string }) => p.conversationId === id);
    await host.api['chat.send']({ conversationId: id, content: 'The lake this morning', images: [image.id] });
    await finished;
    // An image uploaded but never sent is not the person's message: it stays out of the archive.
    const unsent = await uploadImage(host, solidPng(8, 8));
    // The companion's picture comes along too.
    const face = `data:image/png;base64,${solidPng(16, 16, [200, 120, 40]).toString('base64')}`;
    await host.api['self.setAvatar']({ image: face });
    await host.close();

    const out = path.join(source, 'out.zip');
    await exportFolder({ dataDir: source, out, appVersion: '1.0.0' });
    const zip = fs.readFileSync(out);
    const files = unzipSync(zip);
    expect(Object.keys(files).filter((n) => n.startsWith('attachments/'))).toEqual([`attachments/${image.id}`]);
    expect(Buffer.from(files[`attachments/${image.id}`]!).equals(picture)).toBe(true);
    expect(unsent.id).not.toBe(image.id);
    const json = JSON.parse(Buffer.from(files['anima.json']!).toString()) as { sections: { messages: { content: string; images: unknown }[] } };
    expect(json.sections.messages.find((m) => m.content === 'The lake this morning')!.images).toEqual([image]);
    expect(JSON.parse(Buffer.from(files['manifest.json']!).toString()).attachments).toBe(1);
    const faces = Object.keys(files).filter((n) => n.startsWith('companion/'));
    expect(faces).toHaveLength(1);

    const target = tempDataDir('anima-images-dst-');
    dirs.push(target);
    host = await startTestHost({ dataDir: target });
    try {
      let uploadId: string | undefined;
      for (let offset = 0; offset < zip.length; offset += IMPORT_CHUNK_BYTES) {
        const data = zip.subarray(offset, offset + IMPORT_CHUNK_BYTES).toString('base64');
        ({ uploadId } = await host.api['imports.upload']({ uploadId, name: 'anima-export.zip', size: zip.length, offset, data }));
      }
      const preview = await host.api['imports.preview']({ uploadId: uploadId! });
      const ended = nextEvent(host, 'imports.progress', (p: ImportProgress) => p.state !== 'running');
      await host.api['imports.apply']({ previewId: preview.previewId });
      expect(await ended).toMatchObject({ state: 'done', error: null });
      const [conversation] = await host.api['conversations.list']({});
      const { messages } = await host.api['conversations.get']({ id: conversation!.id });
      expect(messages.find((m) => m.role === 'user')!.images).toEqual([image]);
      const got = await host.api['attachments.get']({ id: image.id });
      expect(Buffer.from(got.data, 'base64').equals(picture)).toBe(true);
      expect(fs.readdirSync(attachmentsDir(target))).toEqual([image.id]);
      expect((await host.api['self.profile']({})).avatar).toBe(face);
    } finally {
      await host.close();
    }
  });
});
