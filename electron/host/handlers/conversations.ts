import type { DomainHandlers, HostServices } from './types.js';

export const conversationsHandlers = (s: HostServices): DomainHandlers<'conversations'> => {
  const changed = (conversationId: string) => s.events.emit('conversations.changed', { conversationId });
  return {
    'conversations.list': (input) => s.conversations.list(input),
    'conversations.create': async (input) => {
      const created = await s.conversations.create(input.title, { offRecord: input.offRecord });
      changed(created.id);
      return created;
    },
    'conversations.get': async ({ id }) => ({ conversation: await s.conversations.get(id), messages: await s.conversations.messages(id, { versions: true }) }),
    'conversations.branch': async ({ messageId, title }) => {
      const created = await s.conversations.branch(messageId, title);
      changed(created.id);
      return created;
    },
    'conversations.rename': async ({ id, title }) => {
      const renamed = await s.conversations.rename(id, title);
      changed(id);
      return renamed;
    },
    'conversations.archive': async ({ id, archived }) => {
      const result = await s.conversations.archive(id, archived);
      changed(id);
      // Archiving is leaving it: what was said since the last nap is read now, in the background.
      if (archived) s.napper.leave(id);
      return result;
    },
    'conversations.leave': async ({ id }) => {
      await s.conversations.get(id);
      s.napper.leave(id);
      return { ok: true };
    },
    'conversations.delete': async ({ id }) => {
      // A reply being written is stopped first: nothing more is stored in a conversation in the trash.
      await s.chat.stop(id).catch(() => false);
      const result = await s.trash.delete(id);
      changed(id);
      return result;
    },
    'conversations.restore': async ({ id }) => {
      const restored = await s.trash.restore(id);
      changed(id);
      return restored;
    },
    'conversations.trash': () => s.trash.list(),
    'conversations.setOffRecord': async ({ id, offRecord }) => {
      const result = await s.trash.setOffRecord(id, offRecord);
      changed(id);
      return result;
    },
  };
};
