// Long-term memory in a turn: resident memory and the citation rules in the system prompt, the
// memory tools, passive recall before the person's message, and citations after.
import type { Database } from '../db/open.js';
import type { Conversations } from '../conversations/conversations.js';
import type { HostEvents } from '../events/events.js';
import type { SettingsStore } from '../settings/settings.js';
import { recordCitations } from '../memory/citations.js';
import type { Recall } from '../memory/recall/index.js';
import { buildResident } from '../memory/resident.js';
import type { MemoryStore } from '../memory/store.js';
import type { ChatTurn } from '../llm/types.js';
import { PASSIVE_MESSAGE_NAME, type TurnContext, type TurnMemory } from './chat.js';
import { recallTools } from './tools/recall-tools.js';
import { toolRegistry } from './tools/registry.js';
import { rememberTool } from './tools/remember.js';

export const CITATION_RULES =
  'When my reply uses something I remember — from the list above, from passive recall, or a semantic hit of memory_recall or memory_semantic_search — ' +
  'I end the reply with that memory’s marker exactly as given — [[anima:ID]] with the memory’s own number for ID — once per memory used. ' +
  'Conversation, mood and diary hits have no marker. I never invent a marker or cite a memory I did not use.';

export { PASSIVE_MESSAGE_NAME } from './chat.js';

/** Passive recall must not hold a turn up: past this, the turn goes on without it. */
const PASSIVE_TIMEOUT_MS = 250;

export interface TurnMemoryDeps {
  db: Database;
  store: MemoryStore;
  recall: Recall;
  settings: SettingsStore;
  conversations: Conversations;
  events: HostEvents;
  log: (level: 'info' | 'warn' | 'error', message: string) => void;
}

export function createTurnMemory(deps: TurnMemoryDeps): TurnMemory {
  const { db, store, recall, settings, conversations, events, log } = deps;

  return {
    async promptSections() {
      const s = await settings.get();
      const resident = await buildResident(db, { topN: s.memory.residentTopN, log });
      // The resident block carries its own heading: it is exactly what the Pins view previews.
      const sections: { title?: string; body: string }[] = [];
      if (resident.ids.length) sections.push({ body: resident.text });
      sections.push({ title: 'Citing what I remember', body: CITATION_RULES });
      return { sections, residentIds: resident.ids };
    },

    tools(ctx: TurnContext) {
      // Off the record, the companion may still look things up, but has no hands to save, change or
      // forget a memory: nothing said there may become (or unmake) memory.
      if (ctx.offRecord) return toolRegistry(recallTools(db, recall));
      return toolRegistry([rememberTool(store, { sourceMessageId: ctx.userMessageId }), ...recallTools(db, recall)]);
    },

    async passive(ctx: TurnContext, replyId: string): Promise<ChatTurn | null> {
      const s = await settings.get();
      if (!s.passiveRecall) return null;
      const m = s.memory;
      // Exactly what this request's system prompt carries: nothing twice, nothing left out.
      const excludeIds = m.passiveExcludeResident ? [...ctx.residentIds] : [];
      const result = await recall.passive({
        query: ctx.userText,
        limit: m.passiveLimit,
        minScore: m.passiveMinScore,
        minRelativeScore: m.passiveMinRelativeScore,
        maxChars: m.passiveMaxChars,
        excludeIds,
        timeoutMs: PASSIVE_TIMEOUT_MS,
      });
      if (result.memories.length === 0) return null;
      const ids = result.memories.map((x) => x.id);
      // Counted with everything else the request shows (TurnMemory.showed), not here.
      await conversations.setInjected(replyId, ids);
      events.emit('chat.injected', {
        conversationId: ctx.conversationId,
        messageId: replyId,
        memories: result.memories.map(({ id, type, content }) => ({ id, type, content })),
      });
      return {
        role: 'assistant',
        name: PASSIVE_MESSAGE_NAME,
        content: `(Things I remember that may matter for what comes next — my own notes, not said aloud.)\n${result.text}`,
      };
    },

    async cited(messageId: string, text: string, shown?: readonly number[]) {
      await recordCitations(db, messageId, text, shown);
    },

    async showed(ids: readonly number[]) {
      if (ids.length) await store.addInjected([...ids]);
    },
  };
}
