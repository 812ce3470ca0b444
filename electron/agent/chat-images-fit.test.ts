// Pictures count in the context fit, through the real host and a loopback Ollama: on llava:7b's 4,096
// window a conversation of six short messages, each with a picture, fits as words but not with its
// pictures — the request drops the oldest turns (as a long conversation does) instead of sending what
// the server would cut or refuse; a model that cannot see gets every turn, as words.
import { describe, expect, it } from 'vitest';
import type { Message } from '../../shared/api.js';
import { imagesSent, solidPng } from '../../e2e/fake-llm/images.js';
import { nextEvent } from '../testing/host.js';
import { usePictureModels } from '../attachments/testing/picture-models.js';

const pictures = usePictureModels();

const chatBodies = () => pictures.fake.requests.filter((r) => r.path === '/api/chat').map((r) => r.body as { messages: { role: string; content: string }[] });

async function conversationOfPictures(model: string): Promise<{ messages: { role: string; content: string }[] }> {
  const h = await pictures.host();
  const provider = await h.api['providers.save']({ kind: 'ollama', name: model, baseUrl: pictures.fake.url, model });
  await h.api['settings.update']({ chatProviderId: provider.id });
  const bytes = solidPng(512, 512);
  const { image } = await h.api['attachments.upload']({ size: bytes.length, offset: 0, data: bytes.toString('base64') });
  const { id } = await h.api['conversations.create']({});
  for (let i = 1; i <= 6; i++) {
    const finished = nextEvent(h, 'chat.finished', (p: { conversationId: string }) => p.conversationId === id);
    await h.api['chat.send']({ conversationId: id, content: `Picture ${i} of the garden.`, images: [image!.id] });
    expect(((await finished) as { message: Message }).message.status).toBe('complete');
  }
  return chatBodies().at(-1)!;
}

describe('pictures in the context fit', () => {
  it('a model that sees: the oldest turns leave so the newest pictures fit the window', async () => {
    const body = await conversationOfPictures('llava:7b');
    const asked = body.messages.filter((m) => m.role === 'user').map((m) => m.content);
    // 576 tokens a picture on an unknown server: not all six fit beside the system prompt and the reply's room.
    expect(asked.length).toBeLessThan(6);
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.at(-1)).toContain('Picture 6');
    expect(imagesSent(body)).toHaveLength(asked.length);
  }, 240_000);

  it('a model that cannot see: every turn, as words', async () => {
    const body = await conversationOfPictures('llama3.2:3b');
    expect(body.messages.filter((m) => m.role === 'user')).toHaveLength(6);
    expect(imagesSent(body)).toHaveLength(0);
  }, 240_000);
});
