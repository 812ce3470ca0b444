import type { DomainHandlers, HostServices } from './types.js';

export const chatHandlers = (s: HostServices): DomainHandlers<'chat'> => ({
  'chat.send': async ({ conversationId, content, images }) => {
    // The person is here: the sleep cycle waits for a quiet moment.
    s.sleep.touch();
    return s.chat.send(conversationId, content, images);
  },
  'chat.stop': async (input) => ({ stopped: await s.chat.stop(input.conversationId) }),
  'chat.regenerate': (input) => s.chat.regenerate(input.conversationId),
  'chat.editLast': ({ conversationId, content }) => s.chat.editLast(conversationId, content),
});
