// Anima's own archive, read back: the zip `anima export` writes (its anima.json) or that anima.json
// alone. Reading is pure (bytes in, an AnimaArchive or one ImportError out); storing is
// anima-archive-restore.ts.
//
// Checked before anything is stored, so a damaged or foreign file is refused in words and changes
// nothing: the format and its version; the schema version (an archive from a newer Anima than this
// one is refused — its rows may mean what this app cannot know); every section a list of rows with
// their keys of the right type; no id twice; every reference inside the archive (a message's
// conversation, a journal entry's memory, an alias's entity, an edge's ends) to a row it holds.
import { unzipSync, type UnzipFileInfo } from 'fflate';
import { IMAGE_ID_PATTERN, MAX_IMAGE_BYTES } from '../../shared/api.js';
import { AVATAR_NAME_PATTERN, MAX_AVATAR_BYTES } from '../companion/avatar.js';
import { migrations } from '../db/migrations/index.js';
import { isRecord, megabytes, type ParseContext } from './context.js';
import { MAX_ZIP_RATIO } from './zip.js';

export const ANIMA_ARCHIVE_FORMAT = 'anima-archive';
/** The newest anima.json layout this app reads (electron/archive/export.ts ARCHIVE_FORMAT_VERSION). */
export const ANIMA_ARCHIVE_FORMAT_VERSION = 1;

/** The sections an archive holds, parents first (the order the export writes and a restore needs). */
export const ARCHIVE_SECTIONS = [
  'settings',
  'providers',
  'self_blocks',
  'conversations',
  'messages',
  'memories',
  'memory_changes',
  'memory_references',
  'diary_blocks',
  'mood_days',
  'entities',
  'entity_aliases',
  'entity_edges',
] as const;
export type ArchiveSection = (typeof ARCHIVE_SECTIONS)[number];

export type ArchiveRow = Record<string, unknown>;

export interface AnimaArchive {
  appVersion: string;
  schemaVersion: number;
  formatVersion: number;
  exportedAt: string;
  sections: Record<ArchiveSection, ArchiveRow[]>;
  /** The zip's attached images (`attachments/<id>`), by id; none for an anima.json alone. */
  images?: Map<string, Uint8Array>;
  /** The companion's pictures in the zip (`companion/<name>`), by name. */
  avatars?: Map<string, Uint8Array>;
}

/** The last migration this app knows: an archive with a higher schema version came from a newer Anima. */
export function appSchemaVersion(): number {
  return Math.max(...migrations.map((m) => m.version));
}

/** Whether parsed JSON is an anima.json (its head says so). */
export function isAnimaArchiveJson(parsed: unknown): boolean {
  return isRecord(parsed) && parsed.format === ANIMA_ARCHIVE_FORMAT;
}

/**
 * The attached images in an archive's zip (`attachments/<id>`, the ids the data folder names them
 * by), each at most MAX_IMAGE_BYTES unpacked; anything else under attachments/ is left in the zip.
 * Each is checked again when stored (its first bytes, and that its content gives its id).
 */
export function imagesInZip(buf: Buffer): Map<string, Uint8Array> {
  const wanted = (info: UnzipFileInfo) => {
    const id = info.name.startsWith('attachments/') ? info.name.slice('attachments/'.length) : '';
    return IMAGE_ID_PATTERN.test(id) && info.originalSize <= MAX_IMAGE_BYTES && info.originalSize <= MAX_ZIP_RATIO * Math.max(info.size, 1) + 1024 * 1024;
  };
  try {
    const files = unzipSync(buf, { filter: wanted });
    return new Map(Object.entries(files).map(([name, bytes]) => [name.slice('attachments/'.length), bytes]));
  } catch {
    return new Map(); // a damaged entry: the rows are imported, the pictures say they are missing
  }
}

/** The companion's pictures in an archive's zip (`companion/<name>`), each checked again when stored. */
export function avatarsInZip(buf: Buffer): Map<string, Uint8Array> {
  const wanted = (info: UnzipFileInfo) =>
    info.name.startsWith('companion/') && AVATAR_NAME_PATTERN.test(info.name.slice('companion/'.length)) && info.originalSize <= MAX_AVATAR_BYTES;
  try {
    const files = unzipSync(buf, { filter: wanted });
    return new Map(Object.entries(files).map(([name, bytes]) => [name.slice('companion/'.length), bytes]));
  } catch {
    return new Map(); // a damaged entry: the initial is shown instead
  }
}

/** The anima.json inside a zip, inflated after the same size and ratio checks as any import; null when the zip holds none. */
export function animaJsonInZip(buf: Buffer, ctx: ParseContext, maxBytes: number): Buffer | null {
  const entries: UnzipFileInfo[] = [];
  try {
    unzipSync(buf, {
      filter: (info) => {
        entries.push(info);
        return false;
      },
    });
  } catch {
    return null;
  }
  const entry = entries.find((e) => e.name === 'anima.json');
  if (!entry) return null;
  if (entry.originalSize > maxBytes)
    ctx.fail('too_large', `anima.json in the archive is ${megabytes(entry.originalSize)} unpacked; up to ${megabytes(maxBytes)} can be imported.`);
  if (entry.originalSize > MAX_ZIP_RATIO * Math.max(entry.size, 1) && entry.originalSize > 1024 * 1024)
    ctx.fail('broken_zip', `anima.json in the archive claims to unpack to ${megabytes(entry.originalSize)} from ${megabytes(entry.size)}; it was not opened.`);
  let inflated: Uint8Array | undefined;
  try {
    inflated = unzipSync(buf, { filter: (info) => info.name === 'anima.json' })['anima.json'];
  } catch (err) {
    return ctx.fail('broken_zip', `anima.json in the archive is damaged (${(err as Error).message}); export it again or copy the file again.`);
  }
  if (!inflated || inflated.length !== entry.originalSize)
    ctx.fail('broken_zip', 'anima.json in the archive did not unpack to the size the archive states; it is damaged.');
  return Buffer.from(inflated.buffer, inflated.byteOffset, inflated.byteLength);
}

type Check = 'string' | 'number' | 'id' | 'int';
/** The keys each section's rows must carry, and of what type ('id': a non-empty string; 'int': a positive integer). */
const REQUIRED: Record<ArchiveSection, Record<string, Check>> = {
  settings: { key: 'id' },
  providers: { id: 'id', kind: 'string', base_url: 'string' },
  self_blocks: { key: 'id', content: 'string' },
  conversations: { id: 'id', title: 'string', created_at: 'string' },
  messages: { id: 'id', seq: 'int', conversation_id: 'id', role: 'string', content: 'string', status: 'string', created_at: 'string' },
  memories: { id: 'int', type: 'string', content: 'string', status: 'string', created_at: 'string' },
  memory_changes: { id: 'int', memory_id: 'int', action: 'string', created_at: 'string' },
  memory_references: { message_id: 'id', memory_id: 'int' },
  diary_blocks: { id: 'int', day: 'string', kind: 'string', body: 'string', created_at: 'string' },
  mood_days: { day: 'id' },
  entities: { id: 'int', kind: 'string', name: 'string', name_key: 'string', created_at: 'string' },
  entity_aliases: { entity_id: 'int', alias: 'string', alias_key: 'id' },
  entity_edges: { id: 'int', source_id: 'int', target_id: 'int', relation: 'string', created_at: 'string' },
};

/** The key that must be unique within a section. */
const KEY: Record<ArchiveSection, (r: ArchiveRow) => unknown> = {
  settings: (r) => r.key,
  providers: (r) => r.id,
  self_blocks: (r) => r.key,
  conversations: (r) => r.id,
  messages: (r) => r.id,
  memories: (r) => r.id,
  memory_changes: (r) => r.id,
  memory_references: (r) => `${String(r.message_id)}\u0000${String(r.memory_id)}`,
  diary_blocks: (r) => r.id,
  mood_days: (r) => r.day,
  entities: (r) => r.id,
  entity_aliases: (r) => `${String(r.entity_id)}\u0000${String(r.alias_key)}`,
  entity_edges: (r) => r.id,
};

function typeOk(value: unknown, check: Check): boolean {
  switch (check) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'id':
      return typeof value === 'string' && value.length > 0;
    case 'int':
      return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
  }
}

/** Reads and checks a parsed anima.json. Throws ImportError (through ctx) with words when it cannot be imported. */
export function readAnimaArchive(parsed: unknown, ctx: ParseContext): AnimaArchive {
  if (!isRecord(parsed) || parsed.format !== ANIMA_ARCHIVE_FORMAT) ctx.fail('wrong_shape', 'this is not an Anima archive (its anima.json does not say so).');
  const formatVersion = parsed.formatVersion;
  const schemaVersion = parsed.schemaVersion;
  if (typeof formatVersion !== 'number' || typeof schemaVersion !== 'number' || !Number.isInteger(schemaVersion))
    ctx.fail('wrong_shape', 'the archive does not state its format and schema versions; it was not written by Anima’s export.');
  const appVersion = typeof parsed.appVersion === 'string' ? parsed.appVersion : 'unknown';
  const mine = appSchemaVersion();
  if (formatVersion > ANIMA_ARCHIVE_FORMAT_VERSION || schemaVersion > mine) {
    ctx.fail(
      'newer_version',
      `this archive was written by a newer Anima (version ${appVersion}, data schema ${schemaVersion}); this Anima reads archives up to schema ${mine}. Update Anima, then import it again. Nothing was imported.`,
    );
  }
  if (!isRecord(parsed.sections)) ctx.fail('wrong_shape', 'the archive holds no sections of data.');
  const raw = parsed.sections;
  const sections = {} as Record<ArchiveSection, ArchiveRow[]>;
  for (const name of ARCHIVE_SECTIONS) {
    const rows = raw[name] ?? [];
    if (!Array.isArray(rows)) ctx.fail('wrong_shape', `the archive's “${name}” section is not a list of rows.`);
    const seen = new Set<unknown>();
    for (const [i, row] of rows.entries()) {
      if (!isRecord(row)) ctx.fail('wrong_shape', `row ${i + 1} of the archive's “${name}” section is not an object.`);
      for (const [key, check] of Object.entries(REQUIRED[name])) {
        if (!typeOk(row[key], check)) ctx.fail('wrong_shape', `row ${i + 1} of the archive's “${name}” section has no valid “${key}”.`);
      }
      const key = KEY[name](row);
      if (seen.has(key)) ctx.fail('duplicate_id', `the archive's “${name}” section holds ${JSON.stringify(key).replace(/\\u0000/g, ' / ')} twice.`);
      seen.add(key);
    }
    sections[name] = rows as ArchiveRow[];
  }
  const unknown = Object.keys(raw).filter((k) => !(ARCHIVE_SECTIONS as readonly string[]).includes(k));
  if (unknown.length) ctx.warn(`The archive holds parts this Anima does not read; they are left out: ${unknown.join(', ')}.`);

  // References inside the archive.
  const ids = (section: ArchiveSection, key: string) => new Set(sections[section].map((r) => r[key]));
  const conversations = ids('conversations', 'id');
  const messages = ids('messages', 'id');
  const memories = ids('memories', 'id');
  const changes = ids('memory_changes', 'id');
  const entities = ids('entities', 'id');
  const refer = (section: ArchiveSection, key: string, within: Set<unknown>, what: string, optional = false) => {
    for (const [i, row] of sections[section].entries()) {
      const value = row[key];
      if (optional && (value === null || value === undefined)) continue;
      if (!within.has(value))
        ctx.fail('wrong_shape', `row ${i + 1} of the archive's “${section}” section names ${what} ${JSON.stringify(value)} the archive does not hold.`);
    }
  };
  refer('messages', 'conversation_id', conversations, 'the conversation');
  refer('messages', 'replaced_by', messages, 'the message', true);
  refer('messages', 'parent_id', messages, 'the message', true);
  refer('memories', 'superseded_by', memories, 'the memory', true);
  refer('memory_changes', 'memory_id', memories, 'the memory');
  refer('memory_changes', 'undone_by', changes, 'the journal entry', true);
  refer('memory_references', 'memory_id', memories, 'the memory');
  refer('entities', 'merged_into', entities, 'the entity', true);
  refer('entities', 'profile_memory_id', memories, 'the memory', true);
  refer('entity_aliases', 'entity_id', entities, 'the entity');
  refer('entity_edges', 'source_id', entities, 'the entity');
  refer('entity_edges', 'target_id', entities, 'the entity');
  const exportedAt = typeof parsed.exportedAt === 'string' ? parsed.exportedAt : '';
  return { appVersion, schemaVersion, formatVersion, exportedAt, sections };
}

/** The earliest and latest message dates (ISO), null when there is no message. */
export function archiveSpan(archive: AnimaArchive): { from: string | null; to: string | null } {
  let from: number | null = null;
  let to: number | null = null;
  for (const m of archive.sections.messages) {
    const at = Date.parse(String(m.created_at));
    if (Number.isNaN(at)) continue;
    if (from === null || at < from) from = at;
    if (to === null || at > to) to = at;
  }
  return { from: from === null ? null : new Date(from).toISOString(), to: to === null ? null : new Date(to).toISOString() };
}
