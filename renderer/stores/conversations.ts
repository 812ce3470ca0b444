import { create } from 'zustand';
import type { Conversation, ConversationSummary, DeleteResult } from '../../shared/api.js';
import { api } from '../api/index.js';

export interface ConversationsState {
  items: ConversationSummary[];
  loaded: boolean;
  loading: boolean;
  error: unknown;
  query: string;
  archived: boolean;

  refresh(): Promise<void>;
  setQuery(query: string): void;
  setArchived(archived: boolean): void;
  /** Put a conversation just created at the top of the list being shown (when it belongs there). */
  prepend(conversation: ConversationSummary): void;
  rename(id: string, title: string): Promise<void>;
  setArchivedFlag(id: string, archived: boolean): Promise<Conversation>;
  /** Into the trash (restorable for 30 days); it leaves the list at once. */
  remove(id: string): Promise<DeleteResult>;
  /** Out of the trash, back in the list. */
  restore(id: string): Promise<Conversation>;
  /** Off the record from now on, or back on for what is said next. */
  setOffRecord(id: string, offRecord: boolean): Promise<Conversation>;
  /** A conversations.changed event: refresh soon, once for a burst of them. */
  noteChanged(): void;
  /** Merge one conversation's new state into the list without a round trip. */
  put(conversation: ConversationSummary): void;
}

let requestSeq = 0;
let searchTimer: ReturnType<typeof setTimeout> | undefined;
let changedTimer: ReturnType<typeof setTimeout> | undefined;

function summary(c: ConversationSummary): ConversationSummary {
  return {
    id: c.id,
    title: c.title,
    archived: c.archived,
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
    messageCount: c.messageCount,
    preview: c.preview,
    ...(c.matchSnippet ? { matchSnippet: c.matchSnippet } : {}),
    ...(c.offRecord ? { offRecord: true } : {}),
  };
}

export const useConversations = create<ConversationsState>()((set, get) => ({
  items: [],
  loaded: false,
  loading: false,
  error: null,
  query: '',
  archived: false,

  async refresh() {
    const seq = ++requestSeq;
    const { query, archived } = get();
    set({ loading: true });
    try {
      const trimmed = query.trim();
      const items = await api().call('conversations.list', trimmed ? { query: trimmed, archived } : { archived });
      // Typing fast sends several searches; only the latest answer may land.
      if (seq === requestSeq) set({ items, loaded: true, loading: false, error: null });
    } catch (err) {
      if (seq === requestSeq) set({ loading: false, error: err, loaded: true });
    }
  },

  setQuery(query) {
    set({ query });
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => void get().refresh(), 180);
  },

  setArchived(archived) {
    set({ archived, items: [], loaded: false });
    void get().refresh();
  },

  prepend(conversation) {
    const { archived, query } = get();
    if (!archived && !query.trim()) set({ items: [summary(conversation), ...get().items.filter((c) => c.id !== conversation.id)] });
  },

  async rename(id, title) {
    const updated = await api().call('conversations.rename', { id, title });
    get().put(updated);
  },

  async setArchivedFlag(id, archived) {
    const updated = await api().call('conversations.archive', { id, archived });
    // It leaves the list being shown, whichever way it moved.
    if (updated.archived !== get().archived) set({ items: get().items.filter((c) => c.id !== id) });
    else get().put(updated);
    return updated;
  },

  async remove(id) {
    const result = await api().call('conversations.delete', { id });
    set({ items: get().items.filter((c) => c.id !== id) });
    return result;
  },

  async restore(id) {
    const restored = await api().call('conversations.restore', { id });
    void get().refresh();
    return restored;
  },

  async setOffRecord(id, offRecord) {
    const updated = await api().call('conversations.setOffRecord', { id, offRecord });
    get().put(updated);
    return updated;
  },

  noteChanged() {
    clearTimeout(changedTimer);
    changedTimer = setTimeout(() => void get().refresh(), 250);
  },

  put(conversation) {
    const items = get().items;
    const at = items.findIndex((c) => c.id === conversation.id);
    if (at < 0) return;
    const next = items.slice();
    next[at] = { ...summary(conversation), ...(items[at]!.matchSnippet ? { matchSnippet: items[at]!.matchSnippet } : {}) };
    set({ items: next });
  },
}));
