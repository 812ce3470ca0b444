// The companion speaks first: when the window opens, gets focus or becomes visible, the host is asked
// whether the companion has a morning message (self.greet; the host decides — after a good night,
// once a sleep day — and writes it like any reply). The conversation it lands in is shown: at once
// when it is open or nothing is, else with a note that the companion wrote.
import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { api } from '../api/index.js';
import { useApp } from '../stores/app.js';
import { useChat } from '../stores/chat.js';
import { useConversations } from '../stores/conversations.js';
import { useSelf } from '../stores/self.js';

export function useMorningGreeting(): void {
  // The words come from i18n itself (one object for the window's life), read when the toast is
  // shown: an effect tied to \`t\` would end when the language settles at start and drop the answer
  // of a greeting already being written.
  const { i18n } = useTranslation();
  useEffect(() => {
    const t = i18n.t.bind(i18n);
    let asking = false;
    let gone = false;
    const ask = async () => {
      if (asking || gone || document.visibilityState === 'hidden') return;
      asking = true;
      try {
        const r = await api().call('self.greet', {});
        if (gone || !r.message || !r.conversationId) return;
        const id = r.conversationId;
        void useConversations.getState().refresh();
        const chat = useChat.getState();
        if (chat.openId === id) await chat.refreshOpen();
        else if (!chat.openId && useApp.getState().view === 'chat') await chat.open(id);
        else {
          const name = useSelf.getState().profile?.name ?? t('chat.companion');
          useApp.getState().toast({
            tone: 'info',
            text: t('companion.greeting.toast', { name }),
            action: {
              label: t('companion.greeting.open'),
              run: () => {
                useApp.getState().setView('chat');
                void useChat.getState().open(id);
              },
            },
          });
        }
      } catch {
        // A morning message is a kindness, never an error in the person's way.
      } finally {
        asking = false;
      }
    };
    const onVisible = () => {
      // A rename or a new picture made in another window shows here once this one is looked at again.
      if (document.visibilityState !== 'hidden')
        void useSelf
          .getState()
          .loadProfile()
          .catch(() => {});
      void ask();
    };
    void useSelf
      .getState()
      .loadProfile()
      .catch(() => {});
    void ask();
    window.addEventListener('focus', onVisible);
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      gone = true;
      window.removeEventListener('focus', onVisible);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, [i18n]);
}
