import type { DomainHandlers, HostServices } from './types.js';

export const chatHandlers = (s: HostServices): DomainHandlers<'chat'> => ({
  'chat.send': async ({ conversationId, content, images }) => {
    // The person is here: the sleep cycle waits for a quiet moment.
    s.sleep.touch();
    return s.chat.send(conversationId, content, images);
  },
  'chat.stop': async (input) => ({ stopped: await s.chat.stop(input.conversationId) }),
  'chat.regenerate': (input) => {
    s.sleep.touch();
    return s.chat.regenerate(input.conversationId, input.messageId);
  },
  'chat.editLast': ({ conversationId, content }) => {
    s.sleep.touch();
    return s.chat.editLast(conversationId, content);
  },
  'chat.edit': ({ messageId, content }) => {
    s.sleep.touch();
    return s.chat.edit(messageId, content);
  },
  'chat.continue': ({ conversationId }) => {
    s.sleep.touch();
    return s.chat.continueReply(conversationId);
  },
  'chat.choose': async ({ messageId }) => ({ conversationId: await s.chat.choose(messageId) }),
  'chat.deleteMessage': async ({ messageId }) => ({ conversationId: await s.chat.deleteMessage(messageId) }),
  'chat.restoreMessage': async ({ messageId }) => ({ conversationId: await s.chat.restoreMessage(messageId) }),
});
