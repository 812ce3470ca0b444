import { syncReferenceCounts } from '../../memory/citations.js';
import type { DomainHandlers, HostServices } from './types.js';

export const chatHandlers = (s: HostServices): DomainHandlers<'chat'> => {
  /**
   * Citations count on the chosen line only: when messages leave or join it, the counts are made
   * again (in the background: the person's action is done; the nightly recount would catch up too).
   */
  const lineChanged = <T>(result: T): T => {
    void syncReferenceCounts(s.db).catch((err: Error) => s.log('warn', `citation counts not recounted: ${err.message}`));
    return result;
  };
  /** Messages came back onto the line (a flip, an undo): recall's index, which only ever drops them, is built again at its next search. */
  const lineRejoined = <T>(result: T): T => {
    s.recall.drop();
    return lineChanged(result);
  };
  return {
    'chat.send': async ({ conversationId, content, images }) => {
      // The person is here: the sleep cycle waits for a quiet moment.
      s.sleep.touch();
      return s.chat.send(conversationId, content, images);
    },
    'chat.stop': async (input) => ({ stopped: await s.chat.stop(input.conversationId) }),
    'chat.regenerate': (input) => {
      s.sleep.touch();
      return s.chat.regenerate(input.conversationId, input.messageId).then(lineChanged);
    },
    'chat.editLast': ({ conversationId, content }) => {
      s.sleep.touch();
      return s.chat.editLast(conversationId, content).then(lineChanged);
    },
    'chat.edit': ({ messageId, content }) => {
      s.sleep.touch();
      return s.chat.edit(messageId, content).then(lineChanged);
    },
    'chat.continue': ({ conversationId }) => {
      s.sleep.touch();
      return s.chat.continueReply(conversationId);
    },
    'chat.choose': async ({ messageId }) => lineRejoined({ conversationId: await s.chat.choose(messageId) }),
    'chat.deleteMessage': async ({ messageId }) => lineRejoined({ conversationId: await s.chat.deleteMessage(messageId) }),
    'chat.restoreMessage': async ({ messageId }) => lineRejoined({ conversationId: await s.chat.restoreMessage(messageId) }),
  };
};
