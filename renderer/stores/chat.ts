import { create } from 'zustand';
import type { ApiEvents, Conversation } from '../../shared/api.js';
import { api } from '../api/index.js';
import { applyDelta, applyFinished, applyLoaded, applySendResult, emptyChatData, markStoppedByUser, type ChatData, type SendKind } from '../lib/chatReducer.js';

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
  send(content: string, images?: string[]): Promise<void>;
  stop(): Promise<void>;
  regenerate(): Promise<void>;
  editLast(content: string): Promise<void>;
  applyDeltas(deltas: ApiEvents['chat.delta'][]): void;
  applyFinished(payload: ApiEvents['chat.finished']): void;
  applyStatus(payload: ApiEvents['chat.status']): void;
  setConversation(conversation: Conversation): void;
  requestFocus(): void;
}

export type ReplyStatus = Pick<ApiEvents['chat.status'], 'status' | 'text'>;

let openSeq = 0;

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

    async send(content, images) {
      const id = get().openId;
      if (!id) throw new Error('No conversation is open');
      await runSend('send', () => api().call('chat.send', { conversationId: id, content, ...(images?.length ? { images } : {}) }));
    },

    async stop() {
      const id = get().openId;
      if (!id) return;
      const writing = get().streaming[id];
      // A stopped reply is no longer waiting for anything.
      if (writing) set({ ...markStoppedByUser(data(), writing), replyStatus: withoutKeys(get().replyStatus, [writing]) });
      await api().call('chat.stop', { conversationId: id });
    },

    async regenerate() {
      const id = get().openId;
      if (!id) return;
      await runSend('regenerate', () => api().call('chat.regenerate', { conversationId: id }));
    },

    async editLast(content) {
      const id = get().openId;
      if (!id) return;
      await runSend('edit', () => api().call('chat.editLast', { conversationId: id, content }));
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
  useChat.setState({ ...emptyChatData(), openId: null, conversation: null, loadingId: null, loadError: null, focusRequest: 0, replyStatus: {} });
}
