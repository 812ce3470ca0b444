// Attached images through the real host: uploaded in chunks, checked by their first bytes and size,
// kept as files in the data folder with their references on the message, read into the request of a
// model that sees (Ollama's `vision` capability, read at the fake server), kept from one that cannot
// (it reads "[photo shared]" and the words, as the sleep cycle does).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { IMAGE_CHUNK_BYTES, MAX_IMAGE_BYTES, TRASH_DAYS, seesImages, type Message } from '../../shared/api.js';
import { imagesSent, solidPng } from '../../e2e/fake-llm/images.js';
import { nextEvent } from '../testing/host.js';
import { PATIENCE_MS } from '../testing/patience.js';
import type { Host } from '../host/types.js';
import { usePictureModels } from './testing/picture-models.js';
import { openDatabase } from '../db/open.js';
import { Conversations } from '../conversations/conversations.js';
import { imageFacts, sniffImageType } from './images.js';
import { attachmentsDir } from './store.js';

const pictures = usePictureModels();

async function upload(h: Host, bytes: Buffer) {
  let uploadId: string | undefined;
  let last;
  for (let offset = 0; offset < bytes.length; offset += IMAGE_CHUNK_BYTES) {
    const data = bytes.subarray(offset, offset + IMAGE_CHUNK_BYTES).toString('base64');
    last = await h.api['attachments.upload']({ uploadId, size: bytes.length, offset, data });
    uploadId = last.uploadId;
  }
  return last!;
}

async function send(h: Host, conversationId: string, content: string, images?: string[]): Promise<{ user: Message; reply: Message }> {
  const finished = nextEvent(h, 'chat.finished', (p: { conversationId: string }) => p.conversationId === conversationId);
  const { userMessage } = await h.api['chat.send']({ conversationId, content, images });
  return { user: userMessage, reply: ((await finished) as { message: Message }).message };
}

const chatBodies = () => pictures.fake.requests.filter((r) => r.path === '/api/chat').map((r) => r.body);

describe('image files', () => {
  it('knows png, jpeg, webp and gif by their first bytes, with their dimensions', () => {
    expect(imageFacts(solidPng(40, 30))).toEqual({ type: 'image/png', width: 40, height: 30 });
    // A JPEG: SOI, an APP0 segment, then SOF0 with height 480 and width 640.
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0x00, 0x00, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x01, 0xe0, 0x02, 0x80, 0x03, 0, 0, 0, 0, 0, 0, 0]);
    expect(imageFacts(jpeg)).toEqual({ type: 'image/jpeg', width: 640, height: 480 });
    const gif = Buffer.concat([Buffer.from('GIF89a'), Buffer.from([0x20, 0x00, 0x10, 0x00]), Buffer.alloc(8)]);
    expect(imageFacts(gif)).toEqual({ type: 'image/gif', width: 32, height: 16 });
    const webp = Buffer.alloc(30);
    webp.write('RIFF', 0);
    webp.write('WEBPVP8X', 8);
    webp.writeUIntLE(99, 24, 3);
    webp.writeUIntLE(49, 27, 3);
    expect(imageFacts(webp)).toEqual({ type: 'image/webp', width: 100, height: 50 });
    expect(sniffImageType(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'))).toBeNull();
    expect(sniffImageType(Buffer.from('%PDF-1.7'))).toBeNull();
  });

  it('uploads in chunks into the data folder, once per content; refuses a non-image and an oversized file in words, storing nothing', async () => {
    const h = await pictures.host();
    const png = solidPng(900, 700);
    // Bytes after IEND leave it a PNG, and make the upload take two chunks.
    const big = Buffer.concat([png, Buffer.alloc(IMAGE_CHUNK_BYTES + 10)]);
    const done = await upload(h, big);
    expect(done.complete).toBe(true);
    expect(done.image).toMatchObject({ type: 'image/png', width: 900, height: 700, bytes: big.length });
    expect(done.image!.id).toMatch(/^[0-9a-f]{32}\.png$/);
    const dir = attachmentsDir(h.dataDir);
    expect(fs.readFileSync(path.join(dir, done.image!.id)).equals(big)).toBe(true);
    expect((await upload(h, big)).image!.id).toBe(done.image!.id);
    expect(fs.readdirSync(dir)).toEqual([done.image!.id]);
    const got = await h.api['attachments.get']({ id: done.image!.id });
    expect(got.type).toBe('image/png');
    expect(Buffer.from(got.data, 'base64').equals(big)).toBe(true);

    const text = Buffer.from('hello, this is a text file called photo.png');
    await expect(upload(h, text)).rejects.toMatchObject({ code: 'invalid_input', message: expect.stringContaining('not a PNG, JPEG, WebP or GIF') });
    await expect(h.api['attachments.upload']({ size: MAX_IMAGE_BYTES + 1, offset: 0, data: png.subarray(0, 100).toString('base64') })).rejects.toMatchObject({
      code: 'payload_too_large',
      message: 'This image is 10.0 MB; images up to 10.0 MB can be attached.',
    });
    expect(fs.readdirSync(dir)).toEqual([done.image!.id]);
    await expect(h.api['attachments.get']({ id: '0123456789abcdef0123456789abcdef.png' })).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('erase everything', () => {
  it('takes the attached images with it', async () => {
    const h = await pictures.host();
    await upload(h, solidPng(6, 6));
    expect(fs.readdirSync(attachmentsDir(h.dataDir))).toHaveLength(1);
    await h.api['app.eraseEverything']({ confirm: 'erase' });
    expect(fs.existsSync(attachmentsDir(h.dataDir))).toBe(false);
  });
});

describe('the purge', () => {
  it('removes the image files only a purged conversation named, keeping one another conversation still shows', async () => {
    const h = await pictures.host();
    const provider = await h.api['providers.save']({ kind: 'ollama', name: 'Llava', baseUrl: pictures.fake.url, model: 'llava:7b' });
    await h.api['settings.update']({ chatProviderId: provider.id });
    const shared = (await upload(h, solidPng(8, 8))).image!;
    const onlyInA = (await upload(h, solidPng(9, 9))).image!;
    const a = await h.api['conversations.create']({ title: 'A' });
    const b = await h.api['conversations.create']({ title: 'B' });
    await send(h, a.id, 'Two pictures.', [shared.id, onlyInA.id]);
    await send(h, b.id, 'One of them again.', [shared.id]);
    await h.api['conversations.delete']({ id: a.id });
    const dataDir = h.dataDir;
    await pictures.close(h);
    // In the trash its images stay (a restore shows them again)…
    expect(fs.readdirSync(attachmentsDir(dataDir)).sort()).toEqual([shared.id, onlyInA.id].sort());

    // …and when the purge removes the conversation for good, the picture only it held goes too.
    const later = new Date(Date.now() + (TRASH_DAYS + 1) * 86_400_000);
    const h2 = await pictures.host({ dataDir, now: () => later });
    await expect.poll(() => fs.readdirSync(attachmentsDir(dataDir)), { timeout: PATIENCE_MS }).toEqual([shared.id]);
    expect((await h2.api['attachments.get']({ id: shared.id })).type).toBe('image/png');
  });
});

describe('images in a turn', () => {
  it('a model that sees gets them in Ollama’s shape; the message keeps their references', async () => {
    const h = await pictures.host();
    const provider = await h.api['providers.save']({ kind: 'ollama', name: 'Llava', baseUrl: pictures.fake.url, model: 'llava:7b' });
    expect(provider.abilities?.images).toBe('yes');
    await h.api['settings.update']({ chatProviderId: provider.id });
    const { image } = await upload(h, solidPng(64, 48));
    const { id } = await h.api['conversations.create']({});
    const { user, reply } = await send(h, id, 'This is Miso, my cat.', [image!.id]);
    expect(reply.status).toBe('complete');
    expect(user.images).toEqual([image]);
    const body = chatBodies().at(-1) as { messages: { role: string; content: string; images?: string[] }[] };
    expect(body.messages.at(-1)).toEqual({ role: 'user', content: 'This is Miso, my cat.', images: [solidPng(64, 48).toString('base64')] });
    const got = await h.api['conversations.get']({ id });
    expect(got.messages.find((m) => m.id === user.id)!.images).toEqual([image]);

    // A message of a picture alone is fine too, and the earlier picture still rides along.
    const second = await send(h, id, '', [image!.id]);
    expect(second.reply.status).toBe('complete');
    expect(imagesSent(chatBodies().at(-1))).toHaveLength(2);

    // The sleep cycle and the nap read a note and the caption, never the bytes.
    await pictures.close(h);
    const db = await openDatabase(h.dataDir);
    const transcript = await new Conversations(db).chatMessagesOf(id, 0).finally(() => db.close());
    expect(transcript.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['[photo shared] This is Miso, my cat.', '[photo shared]']);
  });

  it('a model that cannot see gets no image: the note and the words instead', async () => {
    const h = await pictures.host();
    const provider = await h.api['providers.save']({ kind: 'ollama', name: 'Llama', baseUrl: pictures.fake.url, model: 'llama3.2:3b' });
    expect(provider.abilities?.images).toBe('no');
    await h.api['settings.update']({ chatProviderId: provider.id });
    const { image } = await upload(h, solidPng(10, 10));
    const { id } = await h.api['conversations.create']({});
    const { reply } = await send(h, id, 'Look at this sunset', [image!.id]);
    expect(reply.status).toBe('complete');
    const body = chatBodies().at(-1);
    expect(imagesSent(body)).toEqual([]);
    expect((body as { messages: { content: string }[] }).messages.at(-1)!.content).toBe('[photo shared] Look at this sunset');
  });

  it('an image that is not in the data folder, or a fifth one, is refused and nothing is stored', async () => {
    const h = await pictures.host();
    const { id } = await h.api['conversations.create']({});
    await expect(h.api['chat.send']({ conversationId: id, content: 'hi', images: ['0123456789abcdef0123456789abcdef.png'] })).rejects.toMatchObject({
      code: 'not_found',
    });
    const { image } = await upload(h, solidPng(5, 5));
    // (Invalid input is refused before any promise: h.call is the transports' way in.)
    await expect(h.call('chat.send', { conversationId: id, content: 'hi', images: Array(5).fill(image!.id) })).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(h.call('chat.send', { conversationId: id, content: '' })).rejects.toMatchObject({ code: 'invalid_input' });
    expect((await h.api['conversations.get']({ id })).messages).toEqual([]);
  });

  it('whether a model sees: the server’s word, else the kind and the name', () => {
    expect(seesImages({ kind: 'ollama', model: 'llava:7b' }, 'no')).toBe(false);
    expect(seesImages({ kind: 'openai-compatible', model: 'mistral' }, 'yes')).toBe(true);
    expect(seesImages({ kind: 'anthropic', model: 'claude-sonnet-4-5' }, 'unknown')).toBe(true);
    expect(seesImages({ kind: 'openai-compatible', model: 'gpt-4o-mini' }, 'unknown')).toBe(true);
    expect(seesImages({ kind: 'openai-compatible', model: 'qwen2.5-vl-7b-instruct' }, 'unknown')).toBe(true);
    expect(seesImages({ kind: 'openai-compatible', model: 'gpt-3.5-turbo' }, 'unknown')).toBe(false);
    expect(seesImages({ kind: 'openai-compatible', model: 'llama-3.1-8b-instruct' }, 'unknown')).toBe(false);
    expect(seesImages({ kind: 'local', model: 'anima-test/tiny-chat' }, 'unknown')).toBe(false);
  });
});
