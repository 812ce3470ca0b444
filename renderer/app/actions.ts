// Cross-store actions triggered from several places (shortcut, buttons, composer, onboarding).
import type { Conversation } from '../../shared/api.js';
import { api } from '../api/index.js';
import { reportError, useApp } from '../stores/app.js';
import { useChat } from '../stores/chat.js';
import { useConversations } from '../stores/conversations.js';
import { useMemories } from '../stores/memories.js';

let creating: Promise<Conversation> | null = null;

/**
 * Create a conversation and open it. Single-flight: a click on "New" followed at once by Enter in
 * the input must give one conversation, not two.
 */
export function createAndOpen(): Promise<Conversation> {
  if (!creating) {
    creating = (async () => {
      const conversation = await api().call('conversations.create', {});
      // Open first: the list showing it before it is open would make the chat view open it again.
      useChat.getState().openNew(conversation);
      useConversations.getState().prepend(conversation);
      void useConversations.getState().refresh();
      return conversation;
    })().finally(() => {
      creating = null;
    });
  }
  return creating;
}

/** The open conversation, or a new one when none is open (typing into an empty app just works). */
export async function ensureOpenConversation(): Promise<string> {
  if (creating) return (await creating).id;
  const open = useChat.getState().openId;
  if (open) return open;
  return (await createAndOpen()).id;
}

export async function startNewConversation(): Promise<void> {
  const app = useApp.getState();
  app.setView('chat');
  const chat = useChat.getState();
  // An untouched new conversation is reused rather than piling up empty ones — but never an off-the-record
  // one: "New" must give a conversation on the record.
  const open = chat.openId ? chat.messages[chat.openId] : undefined;
  if (!creating && open && open.length === 0 && chat.conversation && !chat.conversation.archived && !chat.conversation.offRecord) {
    chat.requestFocus();
    return;
  }
  const conversations = useConversations.getState();
  if (conversations.archived || conversations.query) {
    useConversations.setState({ archived: false, query: '' });
  }
  try {
    await createAndOpen();
  } catch (err) {
    reportError(err);
  }
}

/** From a chip, the "remembered" line or a pin: the Memories view, with this memory open. */
export function openMemory(id: number): void {
  useMemories.getState().select(id);
  useApp.getState().setView('memories');
}
