// How host events and call results change the chat state. Pure functions over plain data, so the
// tricky orderings (an event beating the reply that announced it, a reconnect mid-stream) are tested
// without a DOM; the zustand store only wires them up.
import type { ApiEvents, Message, SendResult } from '../../shared/api.js';

export interface ChatData {
  /** Messages of every conversation loaded in this window, oldest first, replaced ones included. */
  messages: Record<string, Message[]>;
  /** Per conversation: the id of the reply being written now. */
  streaming: Record<string, string>;
  /** Text that arrived for a reply we have not been told about yet, by message id. */
  pendingText: Record<string, string>;
  /** Replies the person stopped, so a partial one can say "you stopped it" rather than "cut off". */
  stoppedByUser: Record<string, true>;
}

export const emptyChatData = (): ChatData => ({ messages: {}, streaming: {}, pendingText: {}, stoppedByUser: {} });

export type SendKind = 'send' | 'regenerate' | 'edit';

const isVisible = (m: Message) => m.replacedBy === null;

export function visibleMessages(list: readonly Message[]): Message[] {
  return list.filter(isVisible);
}

function without<T>(record: Record<string, T>, key: string): Record<string, T> {
  if (!(key in record)) return record;
  const next = { ...record };
  delete next[key];
  return next;
}

// A user message and the reply to it can share a timestamp; the question still comes first.
function compare(a: Message, b: Message): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  if (a.role !== b.role) return a.role === 'user' ? -1 : 1;
  return 0;
}

/** Insert or replace one message, keeping the list in time order and untouched objects identical. */
export function upsertMessage(list: readonly Message[], message: Message): Message[] {
  const index = list.findIndex((m) => m.id === message.id);
  if (index >= 0) {
    const next = list.slice();
    next[index] = message;
    return next;
  }
  let at = list.length;
  while (at > 0 && compare(list[at - 1]!, message) > 0) at--;
  const next = list.slice();
  next.splice(at, 0, message);
  return next;
}

/**
 * Which versions a message has comes with the conversation (conversations.get), not with the events
 * and call results about one message: a copy without them keeps what the list knew.
 */
function keepVersions(list: readonly Message[], incoming: Message): Message {
  if (incoming.versionIds) return incoming;
  const known = list.find((m) => m.id === incoming.id)?.versionIds;
  return known ? { ...incoming, versionIds: known } : incoming;
}

/** A finished message is final: a late "streaming" copy of it (from a slow call reply) must not undo that. */
function mergeIncoming(existing: Message | undefined, incoming: Message, pending: string | undefined): Message {
  if (existing && existing.status !== 'streaming' && incoming.status === 'streaming') return existing;
  if (incoming.status === 'streaming') {
    let content = incoming.content;
    if (existing && existing.content.length > content.length && existing.content.startsWith(content)) content = existing.content;
    // Text that came before this copy was read holds it all when it began with the reply (another
    // window's reply, watched from its first word): the saved part is not added twice.
    if (pending) content = pending.startsWith(content) ? pending : content + pending;
    return content === incoming.content ? incoming : { ...incoming, content };
  }
  return incoming;
}

export function applyDelta(data: ChatData, payload: ApiEvents['chat.delta']): ChatData {
  const { conversationId, messageId, text } = payload;
  const list = data.messages[conversationId];
  const streaming = data.streaming[conversationId] === messageId ? data.streaming : { ...data.streaming, [conversationId]: messageId };
  if (!list) {
    // Not open here: only remember that it is writing; its text comes with the conversation when opened.
    return streaming === data.streaming ? data : { ...data, streaming };
  }
  const index = list.findIndex((m) => m.id === messageId);
  if (index < 0) {
    return {
      ...data,
      streaming,
      pendingText: { ...data.pendingText, [messageId]: (data.pendingText[messageId] ?? '') + text },
    };
  }
  const current = list[index]!;
  // A delta that arrives after the final message (reconnect replay) changes nothing.
  if (current.status !== 'streaming') return data;
  const next = list.slice();
  next[index] = { ...current, content: current.content + text };
  return { ...data, streaming, messages: { ...data.messages, [conversationId]: next } };
}

export function applyFinished(data: ChatData, payload: ApiEvents['chat.finished']): ChatData {
  const { conversationId, message } = payload;
  const streaming =
    data.streaming[conversationId] === undefined || data.streaming[conversationId] === message.id ? without(data.streaming, conversationId) : data.streaming;
  const pendingText = without(data.pendingText, message.id);
  const list = data.messages[conversationId];
  if (!list) return { ...data, streaming, pendingText };
  return { ...data, streaming, pendingText, messages: { ...data.messages, [conversationId]: upsertMessage(list, keepVersions(list, message)) } };
}

/** A fresh copy of a conversation from the host (first open, or after the event stream reconnected). */
export function applyLoaded(data: ChatData, conversationId: string, incoming: readonly Message[]): ChatData {
  const local = data.messages[conversationId] ?? [];
  const localById = new Map(local.map((m) => [m.id, m]));
  const incomingIds = new Set(incoming.map((m) => m.id));
  let pendingText = data.pendingText;
  let merged: Message[] = incoming.map((m) => {
    const pending = pendingText[m.id];
    if (pending !== undefined) pendingText = without(pendingText, m.id);
    const existing = localById.get(m.id);
    const next = mergeIncoming(existing, m, pending);
    // Keep object identity when nothing changed so memoised rows do not re-render.
    return existing && sameMessage(existing, next) ? existing : next;
  });
  merged.sort(compare);
  // Something we were just told about (a send reply) may be newer than the copy the host sent.
  const newest = merged.length ? merged[merged.length - 1]!.createdAt : '';
  for (const m of local) {
    if (!incomingIds.has(m.id) && m.createdAt >= newest) merged = upsertMessage(merged, m);
  }
  const writing = [...merged].reverse().find((m) => isVisible(m) && m.status === 'streaming');
  const streaming = writing ? { ...data.streaming, [conversationId]: writing.id } : without(data.streaming, conversationId);
  return { ...data, pendingText, streaming, messages: { ...data.messages, [conversationId]: merged } };
}

function sameMessage(a: Message, b: Message): boolean {
  return (
    a.id === b.id &&
    a.content === b.content &&
    a.status === b.status &&
    a.replacedBy === b.replacedBy &&
    (a.versionIds ?? []).join() === (b.versionIds ?? []).join() &&
    a.model === b.model &&
    a.createdAt === b.createdAt &&
    (a.error?.code ?? null) === (b.error?.code ?? null) &&
    sameIds(a.injectedMemoryIds, b.injectedMemoryIds)
  );
}

function sameIds(a: readonly number[] | undefined, b: readonly number[] | undefined): boolean {
  if (a === b) return true;
  const x = a ?? [];
  const y = b ?? [];
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

/** The reply to chat.send / chat.regenerate / chat.editLast. */
export function applySendResult(data: ChatData, result: SendResult, kind: SendKind): ChatData {
  const { userMessage, assistantMessage } = result;
  const conversationId = assistantMessage.conversationId;
  let list = data.messages[conversationId] ?? [];

  // The host keeps replaced messages but only tells us about the new ones; hide the old ones here
  // the same way a reload would.
  if (kind === 'regenerate') {
    // The replies to the last question (normally one) give way to the new one.
    const visible = visibleMessages(list);
    const lastUser = [...visible].reverse().find((m) => m.role === 'user');
    const from = lastUser ? list.indexOf(lastUser) : -1;
    list = list.map((m, i) =>
      i > from && isVisible(m) && m.role === 'assistant' && m.id !== assistantMessage.id ? { ...m, replacedBy: assistantMessage.id } : m,
    );
  } else if (kind === 'edit') {
    const visible = visibleMessages(list);
    const oldUser = [...visible].reverse().find((m) => m.role === 'user' && m.id !== userMessage.id);
    if (oldUser) {
      const from = list.indexOf(oldUser);
      list = list.map((m, i) => {
        if (!isVisible(m) || i < from) return m;
        if (m.id === oldUser.id) return { ...m, replacedBy: userMessage.id };
        if (m.role === 'assistant' && m.id !== assistantMessage.id) return { ...m, replacedBy: assistantMessage.id };
        return m;
      });
    }
  }

  list = upsertMessage(list, keepVersions(list, userMessage));
  const existingReply = list.find((m) => m.id === assistantMessage.id);
  const pending = data.pendingText[assistantMessage.id];
  const reply = mergeIncoming(existingReply, assistantMessage, pending);
  list = upsertMessage(list, reply);

  const pendingText = without(data.pendingText, assistantMessage.id);
  const streaming = reply.status === 'streaming' ? { ...data.streaming, [conversationId]: reply.id } : without(data.streaming, conversationId);
  return { ...data, pendingText, streaming, messages: { ...data.messages, [conversationId]: list } };
}

/** "Continue": a finished reply is being written on; the words that arrive are appended to it. */
export function applyReopened(data: ChatData, conversationId: string, messageId: string): ChatData {
  const list = data.messages[conversationId];
  const index = list?.findIndex((m) => m.id === messageId) ?? -1;
  if (!list || index < 0) return data;
  const next = list.slice();
  next[index] = { ...list[index]!, status: 'streaming', error: null };
  const stoppedByUser = without(data.stoppedByUser, messageId) as Record<string, true>;
  return { ...data, stoppedByUser, streaming: { ...data.streaming, [conversationId]: messageId }, messages: { ...data.messages, [conversationId]: next } };
}

export function markStoppedByUser(data: ChatData, messageId: string): ChatData {
  return data.stoppedByUser[messageId] ? data : { ...data, stoppedByUser: { ...data.stoppedByUser, [messageId]: true } };
}

/** Forget a conversation's messages (e.g. it was archived elsewhere); it reloads when opened. */
export function dropConversation(data: ChatData, conversationId: string): ChatData {
  if (!(conversationId in data.messages)) return data;
  const messages = { ...data.messages };
  delete messages[conversationId];
  return { ...data, messages };
}
