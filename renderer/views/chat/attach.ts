// Attaching an image: checked by its first bytes (never its name) and its size, made no larger than
// MAX_IMAGE_SIDE on its longest side here in the window (canvas), so the host needs no image library
// and a model gets what it can use, then uploaded a chunk at a time.
import { IMAGE_CHUNK_BYTES, MAX_IMAGE_BYTES, MAX_IMAGE_SIDE, type ImageRef, type ImageType } from '../../../shared/api.js';
import { api } from '../../api/index.js';

/** Why an image was not attached; the composer says it in words. */
export class ImageRefused extends Error {
  constructor(
    readonly reason: 'too_big' | 'not_image' | 'unreadable',
    readonly megabytes: number,
  ) {
    super(reason);
  }
}

/** The type its first bytes say (png, jpeg, webp, gif), or null. */
export function sniffType(head: Uint8Array): ImageType | null {
  const at = (i: number, ...bytes: number[]) => bytes.every((b, k) => head[i + k] === b);
  const text = (i: number, s: string) => at(i, ...[...s].map((c) => c.charCodeAt(0)));
  if (at(0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png';
  if (at(0, 0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (text(0, 'RIFF') && text(8, 'WEBP')) return 'image/webp';
  if (text(0, 'GIF87a') || text(0, 'GIF89a')) return 'image/gif';
  return null;
}

/** The bytes to upload: the file itself when small enough, else drawn smaller (png stays png; the rest becomes jpeg). */
export async function prepareImage(file: Blob): Promise<Uint8Array<ArrayBuffer>> {
  const megabytes = Math.round((file.size / (1024 * 1024)) * 10) / 10;
  if (file.size > MAX_IMAGE_BYTES) throw new ImageRefused('too_big', megabytes);
  const bytes = new Uint8Array(await file.arrayBuffer());
  const type = sniffType(bytes.subarray(0, 16));
  if (!type) throw new ImageRefused('not_image', megabytes);
  let bitmap: ImageBitmap;
  try {
    bitmap = await createImageBitmap(new Blob([bytes], { type }));
  } catch {
    throw new ImageRefused('unreadable', megabytes);
  }
  const longest = Math.max(bitmap.width, bitmap.height);
  if (longest <= MAX_IMAGE_SIDE) {
    bitmap.close();
    return bytes; // already small enough (an animated gif stays animated)
  }
  const scale = MAX_IMAGE_SIDE / longest;
  const canvas = document.createElement('canvas');
  canvas.width = Math.max(1, Math.round(bitmap.width * scale));
  canvas.height = Math.max(1, Math.round(bitmap.height * scale));
  const context = canvas.getContext('2d');
  if (!context) throw new ImageRefused('unreadable', megabytes);
  context.imageSmoothingQuality = 'high';
  context.drawImage(bitmap, 0, 0, canvas.width, canvas.height);
  bitmap.close();
  const out = type === 'image/png' ? 'image/png' : 'image/jpeg';
  const blob = await new Promise<Blob | null>((resolve) => canvas.toBlob(resolve, out, 0.9));
  if (!blob) throw new ImageRefused('unreadable', megabytes);
  return new Uint8Array(await blob.arrayBuffer());
}

function base64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** Uploads prepared bytes; the host checks them again and answers with the stored image. */
export async function uploadImage(bytes: Uint8Array): Promise<ImageRef> {
  let uploadId: string | undefined;
  for (let offset = 0; offset < bytes.length; offset += IMAGE_CHUNK_BYTES) {
    const answer = await api().call('attachments.upload', {
      uploadId,
      size: bytes.length,
      offset,
      data: base64(bytes.subarray(offset, offset + IMAGE_CHUNK_BYTES)),
    });
    uploadId = answer.uploadId;
    if (answer.complete && answer.image) return answer.image;
  }
  throw new Error('The upload ended without the image.');
}

/**
 * Data URLs of stored images, by id, made once per window (an image never changes under its id).
 * data: is what the page's Content-Security-Policy lets images come from besides the app itself.
 */
const urls = new Map<string, Promise<string>>();

export function imageUrl(id: string): Promise<string> {
  let url = urls.get(id);
  if (!url) {
    url = api()
      .call('attachments.get', { id })
      .then(({ type, data }) => `data:${type};base64,${data}`);
    url.catch(() => urls.delete(id));
    urls.set(id, url);
  }
  return url;
}

/** A just-attached image is shown from the bytes in hand, and remembered under its id. */
export function rememberUrl(id: string, bytes: Uint8Array, type: ImageType): string {
  const url = `data:${type};base64,${base64(bytes)}`;
  if (!urls.has(id)) urls.set(id, Promise.resolve(url));
  return url;
}
