import { create } from 'zustand';
import type { ApiEvents, Conversation } from '../../shared/api.js';
import { api } from '../api/index.js';
import {
  applyDelta,
  applyFinished,
  applyLoaded,
  applyReopened,
  applySendResult,
  emptyChatData,
  markStoppedByUser,
  visibleMessages,
  type ChatData,
  type SendKind,
} from '../lib/chatReducer.js';

export interface ChatState extends ChatData {
  openId: string | null;
  conversation: Conversation | null;
  loadingId: string | null;
  loadError: unknown;
  /** Bumped to ask the composer to take focus (new conversation, after onboarding). */
  focusRequest: number;
  /**
   * What a reply waits for before its first word (an on-device model loading), by message id. Only
   * for the screen: the first delta, the finished reply or Stop clears it.
   */
  replyStatus: Record<string, ReplyStatus>;

  open(id: string): Promise<void>;
  /** Start a conversation that was just created (nothing to fetch). */
  openNew(conversation: Conversation): void;
  close(): void;
  refreshOpen(): Promise<void>;
  /**
   * A conversation changed on the host — maybe by another window (a message sent from the phone, a
   * rename, a deleted message): the open one is read again, at most one read at a time and one more after it.
   */
  noteChanged(conversationId: string): Promise<void>;
  send(content: string, images?: string[]): Promise<void>;
  stop(): Promise<void>;
  /** Writes a reply again: the last one, or this one (a reply on the chosen line). */
  regenerate(messageId?: string): Promise<void>;
  editLast(content: string): Promise<void>;
  /** Edits a message of the person's: a new version, answered again; what followed the original stays as a branch. */
  edit(messageId: string, content: string): Promise<void>;
  /** Chooses a version: the conversation continues from the line through it. */
  choose(messageId: string): Promise<void>;
  /** Writes on the last reply (cut off, stopped, or too short). */
  continueReply(): Promise<void>;
  /** Deletes one message; the returned function takes the delete back. */
  deleteMessage(messageId: string): Promise<() => Promise<void>>;
  /** A new conversation holding the chosen line through this message; it is opened. */
  branch(messageId: string, title: string): Promise<void>;
  applyDeltas(deltas: ApiEvents['chat.delta'][]): void;
  applyFinished(payload: ApiEvents['chat.finished']): void;
  applyStatus(payload: ApiEvents['chat.status']): void;
  setConversation(conversation: Conversation): void;
  requestFocus(): void;
}

export type ReplyStatus = Pick<ApiEvents['chat.status'], 'status' | 'text'>;

let openSeq = 0;
/** The read noteChanged has under way, and whether another change came while it ran. */
let changedRead: Promise<void> | null = null;
let changedAgain = false;
/** Calls of this window under way that answer with the conversation's new state themselves, by conversation. */
const ownCalls = new Map<string, number>();
/** How many such calls this window has started: a read that began before one must not drop what it brought. */
let ownStarted = 0;
/** Conversations whose reply just finished here: the change the host announces with it brings nothing new. */
const justFinished = new Set<string>();

async function own<T>(conversationId: string, call: () => Promise<T>): Promise<T> {
  ownCalls.set(conversationId, (ownCalls.get(conversationId) ?? 0) + 1);
  ownStarted += 1;
  try {
    return await call();
  } finally {
    const left = (ownCalls.get(conversationId) ?? 1) - 1;
    if (left > 0) ownCalls.set(conversationId, left);
    else ownCalls.delete(conversationId);
  }
}

/**
 * Tells the host the person left a conversation (it may note what was said there now). Never
 * awaited and never shown: the person is already elsewhere.
 */
function left(id: string | null, next: string | null): void {
  if (!id || id === next) return;
  api()
    .call('conversations.leave', { id })
    .catch(() => {});
}

function withoutKeys<T>(record: Record<string, T>, keys: readonly string[]): Record<string, T> {
  if (!keys.some((k) => k in record)) return record;
  const next = { ...record };
  for (const k of keys) delete next[k];
  return next;
}

export const useChat = create<ChatState>()((set, get) => {
  const data = (): ChatData => {
    const s = get();
    return { messages: s.messages, streaming: s.streaming, pendingText: s.pendingText, stoppedByUser: s.stoppedByUser };
  };

  async function runSend(kind: SendKind, call: () => Promise<Parameters<typeof applySendResult>[1]>) {
    const result = await call();
    set(applySendResult(data(), result, kind));
  }

  /**
   * A call that changes the chosen line and starts a reply: the line is read again from the host
   * (which versions are shown where), then the reply is placed (its words may have started already).
   */
  /**
   * After the chosen line changed (a flip, a delete, an undo): the host's line replaces what is here;
   * a message shown here that is not on it any more goes (refreshOpen keeps newer ones, for sends).
   */
  async function reloadLine(conversationId: string) {
    if (get().openId !== conversationId) return;
    const { conversation, messages } = await api().call('conversations.get', { id: conversationId });
    if (get().openId !== conversationId) return;
    const onLine = new Set(messages.map((m) => m.id));
    const here = data();
    const kept = { ...here, messages: { ...here.messages, [conversationId]: (here.messages[conversationId] ?? []).filter((m) => onLine.has(m.id)) } };
    set({ ...applyLoaded(kept, conversationId, messages), conversation });
  }

  async function runAndReload(call: () => Promise<Parameters<typeof applySendResult>[1]>, kind: SendKind = 'send') {
    const result = await call();
    set(applySendResult(data(), result, kind));
    await get().refreshOpen();
  }

  return {
    ...emptyChatData(),
    openId: null,
    conversation: null,
    loadingId: null,
    loadError: null,
    focusRequest: 0,
    replyStatus: {},

    async open(id) {
      const seq = ++openSeq;
      left(get().openId, id);
      set({ openId: id, loadingId: id, loadError: null, conversation: get().conversation?.id === id ? get().conversation : null });
      try {
        const { conversation, messages } = await api().call('conversations.get', { id });
        if (seq !== openSeq) return;
        set({ ...applyLoaded(data(), id, messages), conversation, loadingId: null });
      } catch (err) {
        if (seq !== openSeq) return;
        set({ loadingId: null, loadError: err });
      }
    },

    openNew(conversation) {
      ++openSeq;
      left(get().openId, conversation.id);
      set({
        ...applyLoaded(data(), conversation.id, []),
        openId: conversation.id,
        conversation,
        loadingId: null,
        loadError: null,
        focusRequest: get().focusRequest + 1,
      });
    },

    close() {
      ++openSeq;
      left(get().openId, null);
      set({ openId: null, conversation: null, loadingId: null, loadError: null });
    },

    async refreshOpen() {
      const id = get().openId;
      if (!id) return;
      try {
        const { conversation, messages } = await api().call('conversations.get', { id });
        if (get().openId !== id) return;
        set({ ...applyLoaded(data(), id, messages), conversation });
      } catch {
        // The next event or reconnect tries again; the person keeps what they see.
      }
    },

    noteChanged(conversationId) {
      // The host announces a finished reply, then the change: the reply came with the first.
      if (justFinished.delete(conversationId)) return Promise.resolve();
      if (get().openId !== conversationId || ownCalls.has(conversationId)) return Promise.resolve();
      if (changedRead) {
        changedAgain = true;
        return changedRead;
      }
      // The host's line replaces what is shown (a message another window deleted or moved off the
      // line goes) — unless this window sent meanwhile: its send may be newer than the host's copy,
      // and is kept as refreshOpen keeps it.
      const read = async () => {
        do {
          changedAgain = false;
          const id = get().openId;
          if (!id) return;
          const sendsBefore = ownStarted;
          try {
            const { conversation, messages } = await api().call('conversations.get', { id });
            if (get().openId !== id) continue;
            const here = data();
            const onLine = new Set(messages.map((m) => m.id));
            const sentMeanwhile = ownStarted !== sendsBefore || ownCalls.has(id);
            const kept = sentMeanwhile ? here : { ...here, messages: { ...here.messages, [id]: (here.messages[id] ?? []).filter((m) => onLine.has(m.id)) } };
            set({ ...applyLoaded(kept, id, messages), conversation });
          } catch {
            // The next change or a reconnect reads it again; the person keeps what they see.
          }
        } while (changedAgain);
      };
      changedRead = read().finally(() => (changedRead = null));
      return changedRead;
    },

    async send(content, images) {
      const id = get().openId;
      if (!id) throw new Error('No conversation is open');
      await own(id, () => runSend('send', () => api().call('chat.send', { conversationId: id, content, ...(images?.length ? { images } : {}) })));
    },

    async stop() {
      const id = get().openId;
      if (!id) return;
      const writing = get().streaming[id];
      // A stopped reply is no longer waiting for anything.
      if (writing) set({ ...markStoppedByUser(data(), writing), replyStatus: withoutKeys(get().replyStatus, [writing]) });
      await api().call('chat.stop', { conversationId: id });
    },

    async regenerate(messageId) {
      const id = get().openId;
      if (!id) return;
      if (!messageId) return runAndReload(() => api().call('chat.regenerate', { conversationId: id }), 'regenerate');
      await runAndReload(() => api().call('chat.regenerate', { conversationId: id, messageId }));
    },

    async edit(messageId, content) {
      await runAndReload(() => api().call('chat.edit', { messageId, content }));
    },

    async choose(messageId) {
      const { conversationId } = await api().call('chat.choose', { messageId });
      await reloadLine(conversationId);
    },

    async continueReply() {
      const id = get().openId;
      const last = id ? visibleMessages(get().messages[id] ?? []).at(-1) : undefined;
      if (!id || !last) return;
      // Writing again from here on: the words that arrive are appended to what it says.
      set(applyReopened(data(), id, last.id));
      try {
        await api().call('chat.continue', { conversationId: id });
      } catch (err) {
        await get().refreshOpen();
        throw err;
      }
    },

    async deleteMessage(messageId) {
      const { conversationId } = await api().call('chat.deleteMessage', { messageId });
      await reloadLine(conversationId);
      return async () => {
        await api().call('chat.restoreMessage', { messageId });
        await reloadLine(conversationId);
      };
    },

    async branch(messageId, title) {
      const conversation = await api().call('conversations.branch', { messageId, title });
      await get().open(conversation.id);
    },

    async editLast(content) {
      const id = get().openId;
      if (!id) return;
      await own(id, () => runSend('edit', () => api().call('chat.editLast', { conversationId: id, content })));
    },

    applyDeltas(deltas) {
      if (!deltas.length) return;
      let next = data();
      for (const d of deltas) next = applyDelta(next, d);
      // Words have arrived: whatever the reply waited for is over.
      set({
        ...next,
        replyStatus: withoutKeys(
          get().replyStatus,
          deltas.map((d) => d.messageId),
        ),
      });
    },

    applyFinished(payload) {
      // The finish brings the reply, so the change announced after it costs no read — unless the
      // conversation is still being read here (opened that moment, as for a morning message): that
      // read may hold the reply unfinished, and the finish has no list to land in, so the change reads it.
      if (data().messages[payload.conversationId]) justFinished.add(payload.conversationId);
      set({ ...applyFinished(data(), payload), replyStatus: withoutKeys(get().replyStatus, [payload.message.id]) });
    },

    applyStatus({ conversationId, messageId, status, text }) {
      // A late status (e.g. replayed after the reply already has words or has ended) changes nothing.
      const reply = get().messages[conversationId]?.find((m) => m.id === messageId);
      if (reply && (reply.status !== 'streaming' || reply.content)) return;
      set({ replyStatus: { ...get().replyStatus, [messageId]: { status, text } } });
    },

    setConversation(conversation) {
      if (get().openId === conversation.id) set({ conversation });
    },

    requestFocus() {
      set({ focusRequest: get().focusRequest + 1 });
    },
  };
});

/** Tests start from a clean slate. */
export function resetChatStore(): void {
  openSeq++;
  changedAgain = false;
  ownCalls.clear();
  justFinished.clear();
  useChat.setState({ ...emptyChatData(), openId: null, conversation: null, loadingId: null, loadError: null, focusRequest: 0, replyStatus: {} });
}
