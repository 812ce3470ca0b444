// The companion's picture: a small image file in <dataDir>/companion/, named by its content, that
// settings.companion.avatar names. The renderer resizes a picked picture before sending it (see
// CompanionAvatar.tsx); here it is checked by its bytes, bounded, written aside and renamed. Old
// pictures stay on disk (a picture the person chose is theirs; switching back costs nothing).
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ApiError } from '../../shared/api.js';
import { filesNamed } from '../files/named.js';

export const AVATAR_FOLDER = 'companion';
/** What saveAvatar names a picture: the start of its SHA-256 and its type. */
export const AVATAR_NAME_PATTERN = /^avatar-[0-9a-f]{16}\.(png|jpg|webp)$/;

export function avatarDir(dataDir: string): string {
  return path.join(dataDir, AVATAR_FOLDER);
}
/**
 * The pictures in a companion folder (this data folder's, or one a safety copy holds), by name and
 * size; half-written files and anything not named like a picture are left out. Read-only: the safety
 * copies list and link them (backups/copies.ts).
 */
export function storedAvatars(dir: string): { name: string; bytes: number }[] {
  return filesNamed(dir, AVATAR_NAME_PATTERN);
}

/** Whether a picture file's bytes are the content its name says: the start of their SHA-256. */
export function avatarMatchesName(name: string, bytes: Buffer): boolean {
  return (
    AVATAR_NAME_PATTERN.test(name) && name.slice('avatar-'.length, 'avatar-'.length + 16) === createHash('sha256').update(bytes).digest('hex').slice(0, 16)
  );
}

/** Bytes a stored picture may have (the renderer sends 256×256, far less). */
export const MAX_AVATAR_BYTES = 512 * 1024;

const TYPES = [
  { ext: 'png', mime: 'image/png', magic: (b: Buffer) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) },
  { ext: 'jpg', mime: 'image/jpeg', magic: (b: Buffer) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  { ext: 'webp', mime: 'image/webp', magic: (b: Buffer) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP' },
] as const;

/** Stores a picture given as a data: URL; returns its file name. Anything but a PNG, JPEG or WebP within the size is refused in words. */
export async function saveAvatar(dataDir: string, dataUrl: string): Promise<string> {
  const m = /^data:(image\/[a-z]+);base64,([A-Za-z0-9+/=\s]+)$/.exec(dataUrl);
  if (!m) throw new ApiError('invalid_input', 'The picture must be a PNG, JPEG or WebP image.', 'image');
  const bytes = Buffer.from(m[2]!, 'base64');
  const type = TYPES.find((t) => t.magic(bytes));
  if (!type) throw new ApiError('invalid_input', 'The picture must be a PNG, JPEG or WebP image.', 'image');
  if (bytes.length > MAX_AVATAR_BYTES)
    throw new ApiError('invalid_input', `The picture is too large (${Math.ceil(bytes.length / 1024)} KB; at most ${MAX_AVATAR_BYTES / 1024} KB).`, 'image');
  const name = `avatar-${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}.${type.ext}`;
  const folder = path.join(dataDir, AVATAR_FOLDER);
  await mkdir(folder, { recursive: true });
  const aside = path.join(folder, `${name}.partial`);
  await writeFile(aside, bytes);
  await rename(aside, path.join(folder, name));
  return name;
}

/**
 * A picture from an Anima archive (`companion/<name>`): stored under its name when its bytes are a
 * picture of the type the name says and give that name; returns whether it is here now.
 */
export async function restoreAvatar(dataDir: string, name: string, bytes: Buffer): Promise<boolean> {
  const type = TYPES.find((t) => t.magic(bytes));
  if (!AVATAR_NAME_PATTERN.test(name) || !type || bytes.length > MAX_AVATAR_BYTES) return false;
  const expected = `avatar-${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}.${type.ext}`;
  if (expected !== name) return false;
  const folder = avatarDir(dataDir);
  await mkdir(folder, { recursive: true });
  const aside = path.join(folder, `${name}.partial`);
  await writeFile(aside, bytes);
  await rename(aside, path.join(folder, name));
  return true;
}

/** The stored picture as a data: URL, or null when it is gone (the initial is shown instead). */
export async function readAvatar(dataDir: string, name: string | null): Promise<string | null> {
  if (!name) return null;
  const type = TYPES.find((t) => name.endsWith(`.${t.ext}`));
  if (!type || path.basename(name) !== name) return null;
  try {
    const bytes = await readFile(path.join(dataDir, AVATAR_FOLDER, name));
    return `data:${type.mime};base64,${bytes.toString('base64')}`;
  } catch {
    return null;
  }
}
