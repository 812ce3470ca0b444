// Importing other apps' exports (ChatGPT, Claude, SillyTavern chats, character cards, Open WebUI,
// LibreChat): the file goes up in chunks (a call's body is at most MAX_BODY_BYTES, and an export can
// be hundreds of megabytes), is parsed into a preview the person reads first ("412 conversations,
// 38,120 messages, from 2023-04 to 2026-11"), and only then stored — one transaction per
// conversation, with progress and a cancel. A character card is stored only by a separate call, after
// the person has reviewed (and perhaps edited) its blocks.
import { z } from 'zod';
import type { ApiErrorShape } from './errors.js';
import { empty, id } from './fields.js';
import { SELF_BLOCK_KEYS, type SelfBlock, type SelfBlockKey } from './self.js';

export const IMPORT_FORMATS = ['chatgpt', 'claude', 'sillytavern', 'card', 'openwebui', 'librechat', 'anima'] as const;
export type ImportFormatName = (typeof IMPORT_FORMATS)[number];

/** The largest file an import reads (the parsers hold a whole export in memory). */
export const MAX_IMPORT_BYTES = 256 * 1024 * 1024;
/** Bytes of the file per upload call: base64 makes them 4/3 as many, well inside MAX_BODY_BYTES. */
export const IMPORT_CHUNK_BYTES = 512 * 1024;

/** A character card found in the file: its text mapped onto the companion's blocks, for review. */
export interface ImportCardPreview {
  name: string;
  spec: 'v1' | 'v2' | 'v3';
  blocks: Partial<Record<SelfBlockKey, string>>;
  greeting: string | null;
}

/** The parts of Anima's own archive a preview counts. */
export const IMPORT_ARCHIVE_PARTS = [
  'conversations',
  'messages',
  'memories',
  'memoryChanges',
  'references',
  'diaryBlocks',
  'moodDays',
  'entities',
  'aliases',
  'relations',
  'selfBlocks',
  'settings',
  'providers',
] as const;
export type ImportArchivePart = (typeof IMPORT_ARCHIVE_PARTS)[number];

/** Anima's own archive: what wrote it, and per part the rows it holds and how many of them are here already (skipped). */
export interface ImportArchivePreview {
  appVersion: string;
  schemaVersion: number;
  exportedAt: string;
  parts: Record<ImportArchivePart, { total: number; already: number }>;
}

/** What a file would bring in, before anything is stored. */
export interface ImportPreview {
  /** What imports.apply takes; kept by the host until applied or discarded (or 30 minutes unused). */
  previewId: string;
  /** The file's name as given. */
  file: string;
  format: ImportFormatName;
  /** Conversations with messages, and of them those already in this data folder (skipped). */
  conversations: number;
  alreadyImported: number;
  /** …of which in the trash (restore them there instead). */
  inTrash: number;
  /**
   * Of those here already, the ones the file carries further (the person went on chatting there):
   * how many, and the messages they would add after ours. Absent in an archive's preview.
   */
  grown?: number;
  newMessages?: number;
  /** …whose last message the file has otherwise (it would become an earlier version of ours). */
  newVersions?: number;
  /** …whose earlier messages the file tells differently: ours is kept, nothing added (a note says so after the import). */
  diverged?: number;
  /** Messages of the main lines, and earlier versions kept beside them. */
  messages: number;
  versions: number;
  /** The earliest and latest message dates (ISO 8601), null when none has a date. */
  from: string | null;
  to: string | null;
  /** Messages without a date (stored with the date of the message before them). */
  undated: number;
  card: ImportCardPreview | null;
  /** Anima's own archive (format 'anima'): everything it holds besides conversations; null for other formats. */
  archive?: ImportArchivePreview | null;
  /** What the person should know (dates set aside, items skipped), in the parser's words. */
  warnings: string[];
}

export type ImportState = 'running' | 'done' | 'cancelled' | 'failed';

/** An import's progress (the `imports.progress` event, at most four a second plus every change of state). */
export interface ImportProgress {
  jobId: string;
  previewId: string;
  file: string;
  format: ImportFormatName;
  state: ImportState;
  /** Conversations to go through, and done so far (stored or skipped as already here). */
  total: number;
  done: number;
  imported: number;
  already: number;
  inTrash: number;
  messages: number;
  versions: number;
  /** Conversations here already that the file carries further: how many got new messages, and how many messages (part of `messages`). */
  grown?: number;
  added?: number;
  /** Conversations here already that the file tells differently from an earlier message on: ours kept, nothing added (counted in `already`). */
  diverged?: number;
  /** What the person should know about conversations that were not simply stored (one kept as it is here, by title), in English. */
  notes?: string[];
  /** Why it stopped, when it failed; what was stored before stays (a second import goes on from there). */
  error: ApiErrorShape | null;
  /** The conversation that failed: nothing of it was stored. */
  failedAt: string | null;
  startedAt: string;
  finishedAt: string | null;
}

/** After a card was applied: the blocks now, and what each held before (what "undo" puts back). */
export interface AppliedCardResult {
  blocks: SelfBlock[];
  previous: { key: SelfBlockKey; content: string; isDefault: boolean }[];
}

const base64 = z
  .string()
  .max(Math.ceil(IMPORT_CHUNK_BYTES / 3) * 4)
  .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'expected base64');

export const importsInputs = {
  /**
   * One chunk of a file, in order: the first call has no uploadId (and offset 0) and gets one back;
   * the file is complete when `received` reaches `size`.
   */
  'imports.upload': z
    .object({
      uploadId: id.optional(),
      name: z.string().trim().min(1).max(255),
      size: z.number().int().min(1),
      offset: z.number().int().min(0),
      data: base64,
    })
    .strict(),
  /** Parses a complete upload: the summary, and the id imports.apply takes. */
  'imports.preview': z.object({ uploadId: id }).strict(),
  /** Stores what a preview holds; returns at once. Progress arrives as imports.progress, the last one with its end state. */
  'imports.apply': z.object({ previewId: id }).strict(),
  /** Stops the running import after the conversation in hand; what was stored stays. */
  'imports.cancel': empty,
  /** The running import, or the last one (null when none ran since Anima started). */
  'imports.status': empty,
  /** Forgets an upload or a preview (the person closed the dialog). */
  'imports.discard': z.object({ id }).strict(),
  /** Writes a reviewed card's blocks into the companion's self layer (only the blocks given). */
  'imports.applyCard': z.object({ blocks: z.partialRecord(z.enum(SELF_BLOCK_KEYS), z.string().max(20_000)) }).strict(),
} as const;

export interface ImportsOutputs {
  'imports.upload': { uploadId: string; received: number; complete: boolean };
  'imports.preview': ImportPreview;
  'imports.apply': ImportProgress;
  'imports.cancel': { cancelled: boolean };
  'imports.status': ImportProgress | null;
  'imports.discard': { discarded: boolean };
  'imports.applyCard': AppliedCardResult;
}
