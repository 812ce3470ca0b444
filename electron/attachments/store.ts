// The images people attach: files in `<dataDir>/attachments/`, one per content (named by the start of
// its SHA-256 and its type's extension), never in the database — a message row keeps only their
// references (`messages.images`, migration 024). Uploads arrive a chunk at a time (the transport's
// 1 MB body limit), are checked by their first bytes and size, and are written aside and renamed, so
// a file under its name is always whole. No table. A file goes only with the last message naming it:
// when the purge has removed a trashed conversation for good (removeUnreferenced), or on erase.
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ApiError } from '../../shared/api.js';
import { IMAGE_CHUNK_BYTES, IMAGE_ID_PATTERN, MAX_IMAGE_BYTES, type ImageRef, type ImageType } from '../../shared/api/attachments.js';
import { filesNamed } from '../files/named.js';
import { EXTENSIONS, imageFacts } from './images.js';

export function attachmentsDir(dataDir: string): string {
  return path.join(dataDir, 'attachments');
}

/**
 * The image files in an attachments folder (this data folder's, or one a safety copy holds), by name
 * and size; half-written uploads and anything not named like an image are left out. Read-only: the
 * safety copies list and link them (backups/copies.ts).
 */
export function storedImages(dir: string): { name: string; bytes: number }[] {
  return filesNamed(dir, IMAGE_ID_PATTERN);
}

/** Whether an image file's bytes are the content its name says: the start of their SHA-256. */
export function imageMatchesName(name: string, bytes: Buffer): boolean {
  return IMAGE_ID_PATTERN.test(name) && createHash('sha256').update(bytes).digest('hex').slice(0, 32) === name.slice(0, 32);
}

/** An upload left unfinished this long is forgotten. */
const UPLOAD_TTL_MS = 10 * 60_000;
/** An image file no message names yet is kept this long (uploaded, the message not sent yet). */
const UNSENT_GRACE_MS = 24 * 60 * 60_000;
/** Unfinished uploads kept at once (each up to MAX_IMAGE_BYTES in memory). */
const MAX_PENDING = 8;

interface Upload {
  size: number;
  chunks: Buffer[];
  received: number;
  touchedAt: number;
}

const megabytes = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MB`;

export const NOT_AN_IMAGE = 'This file is not a PNG, JPEG, WebP or GIF image (its content says so, whatever its name); only those can be attached.';

export class AttachmentStore {
  private readonly uploads = new Map<string, Upload>();

  constructor(readonly dir: string) {}

  async upload(input: {
    uploadId?: string;
    size: number;
    offset: number;
    data: string;
  }): Promise<{ uploadId: string; received: number; complete: boolean; image?: ImageRef }> {
    this.sweep();
    if (input.size > MAX_IMAGE_BYTES) {
      throw new ApiError('payload_too_large', `This image is ${megabytes(input.size)}; images up to ${megabytes(MAX_IMAGE_BYTES)} can be attached.`, 'size');
    }
    const bytes = Buffer.from(input.data, 'base64');
    if (bytes.length > IMAGE_CHUNK_BYTES) throw new ApiError('invalid_input', `A chunk holds at most ${IMAGE_CHUNK_BYTES} bytes.`, 'data');
    let id = input.uploadId;
    let upload = id ? this.uploads.get(id) : undefined;
    if (id && !upload)
      throw new ApiError('not_found', 'That upload is no longer here (finished, or left unused too long). Attach the image again.', 'uploadId');
    if (!upload) {
      if (input.offset !== 0) throw new ApiError('invalid_input', 'An upload starts at offset 0.', 'offset');
      if (this.uploads.size >= MAX_PENDING) this.uploads.delete(this.uploads.keys().next().value!);
      id = randomUUID();
      upload = { size: input.size, chunks: [], received: 0, touchedAt: 0 };
      this.uploads.set(id, upload);
    }
    if (input.size !== upload.size) throw new ApiError('invalid_input', 'The chunk belongs to another file than this upload.', 'size');
    if (input.offset !== upload.received) throw new ApiError('invalid_input', `Expected the chunk at offset ${upload.received}.`, 'offset');
    if (upload.received + bytes.length > upload.size) throw new ApiError('invalid_input', 'The upload is longer than its stated size.', 'data');
    upload.chunks.push(bytes);
    upload.received += bytes.length;
    upload.touchedAt = Date.now();
    if (upload.received < upload.size) return { uploadId: id!, received: upload.received, complete: false };
    this.uploads.delete(id!);
    const image = await this.put(Buffer.concat(upload.chunks));
    return { uploadId: id!, received: upload.received, complete: true, image };
  }

  /** Stores an image's bytes (once per content) and returns its reference; refuses anything else in words. */
  async put(bytes: Buffer): Promise<ImageRef> {
    if (bytes.length > MAX_IMAGE_BYTES) {
      throw new ApiError('payload_too_large', `This image is ${megabytes(bytes.length)}; images up to ${megabytes(MAX_IMAGE_BYTES)} can be attached.`, 'size');
    }
    const facts = imageFacts(bytes);
    if (!facts) throw new ApiError('invalid_input', NOT_AN_IMAGE, 'data');
    const id = `${createHash('sha256').update(bytes).digest('hex').slice(0, 32)}.${EXTENSIONS[facts.type]}`;
    const file = path.join(this.dir, id);
    if (!fs.existsSync(file)) {
      await fs.promises.mkdir(this.dir, { recursive: true, mode: 0o700 });
      const aside = `${file}.${randomUUID()}.partial`;
      await fs.promises.writeFile(aside, bytes, { mode: 0o600 });
      await fs.promises.rename(aside, file);
    } else {
      // Uploaded again: fresh, so removeUnreferenced leaves it for the message about to name it.
      const now = new Date();
      await fs.promises.utimes(file, now, now);
    }
    return { id, type: facts.type, bytes: bytes.length, width: facts.width, height: facts.height };
  }

  /** The references of stored images, in order; one that is not here is an error in words. */
  async refs(ids: readonly string[]): Promise<ImageRef[]> {
    return Promise.all(
      ids.map(async (id) => {
        const bytes = await this.read(id);
        const facts = imageFacts(bytes)!;
        return { id, type: facts.type, bytes: bytes.length, width: facts.width, height: facts.height };
      }),
    );
  }

  /** An image's bytes. */
  async read(id: string): Promise<Buffer> {
    if (!IMAGE_ID_PATTERN.test(id)) throw new ApiError('invalid_input', 'That is not an image id.', 'id');
    try {
      return await fs.promises.readFile(path.join(this.dir, id));
    } catch {
      throw new ApiError('not_found', 'That image is not in the data folder any more; attach it again.', 'id');
    }
  }

  async get(id: string): Promise<{ type: ImageType; data: string }> {
    const bytes = await this.read(id);
    const facts = imageFacts(bytes);
    if (!facts) throw new ApiError('not_found', 'That image file is damaged.', 'id');
    return { type: facts.type, data: bytes.toString('base64') };
  }

  /** Whether an image is here (an archive import skips what it has). */
  has(id: string): boolean {
    return IMAGE_ID_PATTERN.test(id) && fs.existsSync(path.join(this.dir, id));
  }

  /**
   * Removes the image files no message names any more (`inUse`: every id any message row holds, in
   * the trash or not), except those written or uploaded again within UNSENT_GRACE_MS: an image is
   * uploaded before the message naming it is sent. Returns how many files went.
   */
  async removeUnreferenced(inUse: ReadonlySet<string>, now = Date.now()): Promise<number> {
    let names: string[];
    try {
      names = await fs.promises.readdir(this.dir);
    } catch {
      return 0;
    }
    let removed = 0;
    for (const name of names) {
      if (!IMAGE_ID_PATTERN.test(name) || inUse.has(name)) continue;
      const file = path.join(this.dir, name);
      const stat = await fs.promises.stat(file).catch(() => null);
      if (!stat || now - stat.mtimeMs < UNSENT_GRACE_MS) continue;
      await fs.promises.rm(file, { force: true });
      removed++;
    }
    return removed;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [id, upload] of this.uploads) if (now - upload.touchedAt > UPLOAD_TTL_MS && upload.touchedAt > 0) this.uploads.delete(id);
  }
}
