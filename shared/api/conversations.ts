// Conversations and their messages: the list, one conversation, and the chat turn (send, stop,
// regenerate, edit) with the conversations.* and chat.* methods.
import { z } from 'zod';
import type { ApiErrorShape } from './errors.js';
import { id } from './fields.js';
import { imageId, MAX_IMAGES_PER_MESSAGE, type ImageRef } from './attachments.js';

export type MessageRole = 'user' | 'assistant';
/** streaming: a reply being written now; partial: cut off by Stop or a crash; error: the model call failed. */
export type MessageStatus = 'complete' | 'streaming' | 'partial' | 'error';

export interface Message {
  id: string;
  conversationId: string;
  role: MessageRole;
  content: string;
  status: MessageStatus;
  error: ApiErrorShape | null;
  /** The model that wrote an assistant message. */
  model: string | null;
  createdAt: string; // ISO 8601
  /** Set when a later version replaced this one (regenerate, edit): kept, never deleted. */
  replacedBy: string | null;
  /** Who spoke, when not simply "the person" or "the companion" (imported conversations). */
  speaker: string | null;
  /** Memories passive recall put in front of the model for this reply. */
  injectedMemoryIds: number[];
  /** Said off the record: shown to the person, never recalled, read by the sleep cycle, embedded or put in the graph. */
  offRecord?: boolean;
  /** Images the person attached (files in the data folder; shared/api/attachments.ts). */
  images?: ImageRef[];
  /**
   * When this message has other versions (regenerated replies, edits of a message; siblings of its
   * own role): every version's id in the order written, this one among them. chat.choose flips.
   */
  versionIds?: string[];
}

export interface ConversationSummary {
  id: string;
  title: string;
  archived: boolean;
  createdAt: string;
  updatedAt: string;
  messageCount: number;
  /** The start of the last visible message, for the list. */
  preview: string;
  /** When a search matched message content rather than the title: a snippet of that message. */
  matchSnippet?: string;
  /** New messages are kept off the record (see Message.offRecord). */
  offRecord?: boolean;
}

/** How long a deleted conversation waits in the trash before it is removed for good. */
export const TRASH_DAYS = 30;

/** A deleted conversation in the trash: restorable until `purgeAt`. */
export interface TrashedConversation {
  id: string;
  title: string;
  messageCount: number;
  preview: string;
  deletedAt: string;
  /** When the purge removes its messages for good (deletedAt + TRASH_DAYS). */
  purgeAt: string;
}

/** What deleting a conversation took along, besides its messages (all of it comes back on restore). */
export interface DeleteResult {
  trashed: TrashedConversation;
  /** Memories whose only sources were its messages: expired, journalled in one batch. */
  memoriesExpired: number;
  /** Diary anchors and imprints written from it alone: hidden. */
  diaryHidden: number;
  /** Its messages whose entity mentions were taken out of the graph. */
  mentionsCleared: number;
}

export interface Conversation extends ConversationSummary {
  /** The system prompt snapshot and the sleep day it was built for. */
  systemPrompt: string;
  systemPromptDay: string | null;
}

export interface SendResult {
  userMessage: Message;
  /** The reply placeholder (status streaming); its text arrives as chat.delta events. */
  assistantMessage: Message;
}

/** 1 MB is the transport limit; a single message may use most of it. */
export const MAX_MESSAGE_CHARS = 200_000;

export const conversationsInputs = {
  'conversations.list': z.object({ query: z.string().max(500).optional(), archived: z.boolean().optional() }).strict(),
  'conversations.create': z.object({ title: z.string().max(200).optional(), offRecord: z.boolean().optional() }).strict(),
  'conversations.get': z.object({ id }).strict(),
  'conversations.rename': z.object({ id, title: z.string().trim().min(1).max(200) }).strict(),
  'conversations.archive': z.object({ id, archived: z.boolean() }).strict(),
  /** Into the trash, with what the sleep cycle derived from it alone; restorable for TRASH_DAYS days. */
  'conversations.delete': z.object({ id }).strict(),
  /** Out of the trash, with everything the delete took along. */
  'conversations.restore': z.object({ id }).strict(),
  /** The trash: deleted conversations, newest first, with when each is purged. */
  'conversations.trash': z.object({}).strict(),
  /**
   * Off the record from now on (its messages so far too, and their vectors are dropped), or back on
   * the record: only messages said from then on are read again — earlier ones stay off.
   */
  'conversations.setOffRecord': z.object({ id, offRecord: z.boolean() }).strict(),
  /** The person left this conversation (opened another, closed it): daytime memory may read it now. */
  'conversations.leave': z.object({ id }).strict(),

  /** Store the user's message, then stream the reply as chat.* events. */
  'chat.send': z
    .object({
      conversationId: id,
      content: z.string().max(MAX_MESSAGE_CHARS),
      /** Images uploaded with attachments.upload; a message of images alone may have no words. */
      images: z.array(imageId).min(1).max(MAX_IMAGES_PER_MESSAGE).optional(),
    })
    .strict()
    .refine((m) => m.content.length > 0 || (m.images?.length ?? 0) > 0, { message: 'write something or attach an image', path: ['content'] }),
  /** Stop the reply being written in this conversation; what arrived is kept as partial. */
  'chat.stop': z.object({ conversationId: id }).strict(),
  /**
   * Write a reply again (also "retry" after an error): the last one, or `messageId` (a reply on the
   * chosen line). The old reply is kept as an earlier version, with what followed it.
   */
  'chat.regenerate': z.object({ conversationId: id, messageId: id.optional() }).strict(),
  /** Replace the last user message with an edited version and answer it again; the old one is kept. */
  'chat.editLast': z.object({ conversationId: id, content: z.string().min(1).max(MAX_MESSAGE_CHARS) }).strict(),
  /** Edit any message of the person's on the chosen line: the edit is a new version, answered again; the original and what followed it stay as an earlier branch. */
  'chat.edit': z.object({ messageId: id, content: z.string().min(1).max(MAX_MESSAGE_CHARS) }).strict(),
  /** Choose a version: the line through this message becomes the one the conversation continues from. */
  'chat.choose': z.object({ messageId: id }).strict(),
  /** "Continue": the last reply (partial, cut off or complete) is written on; what comes is appended to it. */
  'chat.continue': z.object({ conversationId: id }).strict(),
  /** Delete one message (kept on disk, off the line; what followed it follows the message before). Undo: chat.restoreMessage. */
  'chat.deleteMessage': z.object({ messageId: id }).strict(),
  /** Take back a message's delete: it returns where it was. */
  'chat.restoreMessage': z.object({ messageId: id }).strict(),
  /** "Branch from here": a new conversation holding a copy of the chosen line through this message. */
  'conversations.branch': z.object({ messageId: id, title: z.string().trim().min(1).max(200).optional() }).strict(),
} as const;

export interface ConversationsOutputs {
  'conversations.list': ConversationSummary[];
  'conversations.create': Conversation;
  'conversations.get': { conversation: Conversation; messages: Message[] };
  'conversations.rename': Conversation;
  'conversations.archive': Conversation;
  'conversations.leave': { ok: true };
  'conversations.delete': DeleteResult;
  'conversations.restore': Conversation;
  'conversations.trash': TrashedConversation[];
  'conversations.setOffRecord': Conversation;
  'chat.send': SendResult;
  'chat.stop': { stopped: boolean };
  'chat.regenerate': SendResult;
  'chat.editLast': SendResult;
  'chat.edit': SendResult;
  'chat.choose': { conversationId: string };
  'chat.continue': SendResult;
  'chat.deleteMessage': { conversationId: string };
  'chat.restoreMessage': { conversationId: string };
  'conversations.branch': Conversation;
}
