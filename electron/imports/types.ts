// The neutral shape every import parser returns: what another app's export says, in words Anima can
// store, before anything is stored. Parsers are pure (bytes in, this out); storing it is another
// module's job. Every string here has already been made storable (shared/text.ts storableText).
import type { SelfBlockKey } from '../../shared/api.js';
import type { AnimaArchive } from './anima-archive.js';

/** The formats parseImport recognises. */
export type ImportFormat = 'chatgpt' | 'claude' | 'sillytavern' | 'card' | 'openwebui' | 'librechat' | 'anima';

export interface ImportedMessage {
  role: 'user' | 'assistant';
  /** The chosen text (the one the conversation went on from). May be '' when the source had only notes or a failed reply. */
  text: string;
  /** When it was written, ISO 8601 UTC; null when the source has no date or an implausible one (see warnings). */
  at: string | null;
  /** Who spoke, as the source names them (a persona or character name); absent when the source has no name. */
  speaker?: string;
  /** The model that wrote an assistant message, when the source says. */
  model?: string;
  /** Earlier versions of this message (regenerations, edits, other swipes), oldest first; `text` is the chosen one and is not repeated here. */
  versions?: string[];
  /** What is not chat text but should not vanish: tool calls and results, images, attachments — as short text notes. */
  notes?: string[];
}

export interface ImportedConversation {
  /** The source's own id for the conversation (for duplicate detection on re-import); null when it has none. */
  sourceId: string | null;
  /** The source's title; '' when it has none (the importer picks one). */
  title: string;
  createdAt: string | null;
  updatedAt: string | null;
  /** The main line, oldest first. */
  messages: ImportedMessage[];
}

export interface ImportedCard {
  /** The character's name, as the card gives it. */
  name: string;
  /** The card's text mapped onto the self blocks ({{char}}/{{user}} replaced, CRLF normalised); only the blocks the card has. */
  blocks: Partial<Record<SelfBlockKey, string>>;
  /** The card's first message, when it has one. */
  greeting?: string;
  /** Which card spec the text came from. */
  spec: 'v1' | 'v2' | 'v3';
  /** The parsed card JSON, as found (for review and for keeping what the blocks do not hold). */
  raw: unknown;
}

export interface ParseResult {
  format: ImportFormat;
  /** Empty for a card. */
  conversations: ImportedConversation[];
  /** Present only when format is 'card'. */
  card?: ImportedCard;
  /** Present only when format is 'anima': Anima's own archive, stored whole by anima-archive-restore.ts (`conversations` is empty). */
  archive?: AnimaArchive;
  /** Things a person should know that did not stop the import (dates read as local time, dates set aside, items skipped). */
  warnings: string[];
}
