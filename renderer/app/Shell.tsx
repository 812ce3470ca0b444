import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { Icon } from '../components/Icon.js';
import { Toasts } from '../components/Toasts.js';
import { useApp, VIEWS } from '../stores/app.js';
import { useProviders } from '../stores/providers.js';
import { ChatView } from '../views/chat/ChatView.js';
import { DiaryView } from '../views/diary/DiaryView.js';
import { DreamsView } from '../views/dreams/DreamsView.js';
import { GraphView } from '../views/graph/GraphView.js';
import { LaterView } from '../views/later/LaterView.js';
import { MemoriesView } from '../views/memories/MemoriesView.js';
import { PinsView } from '../views/pins/PinsView.js';
import { SettingsView } from '../views/settings/SettingsView.js';
import { SleepView } from '../views/sleep/SleepView.js';
import { startNewConversation } from './actions.js';
import { NavRail } from './NavRail.js';
import { ServerBanner } from './ServerBanner.js';
import { useVisualViewport } from './phone.js';
import { useMorningGreeting } from './useMorningGreeting.js';

function useShortcuts() {
  const setView = useApp((s) => s.setView);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!(e.ctrlKey || e.metaKey) || e.altKey || e.shiftKey || e.isComposing) return;
      if (/^[1-8]$/.test(e.key)) {
        e.preventDefault();
        setView(VIEWS[Number(e.key) - 1]!);
      } else if (e.key.toLowerCase() === 'n') {
        e.preventDefault();
        void startNewConversation();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [setView]);
}

function Notices() {
  const { t } = useTranslation();
  const notices = useApp((s) => s.notices);
  const dismiss = useApp((s) => s.dismissNotice);
  if (!notices.length) return null;
  return (
    <section className="notices" aria-label={t('app.noticesTitle')}>
      {notices.map((notice, i) => (
        <div className="notice" key={`${i}-${notice}`} role="status">
          <Icon name="sparkle" size={16} />
          <span>{notice}</span>
          <button type="button" className="button ghost small" onClick={() => dismiss(i)}>
            {t('common.dismiss')}
          </button>
        </div>
      ))}
    </section>
  );
}

function ConnectionBanner() {
  const { t } = useTranslation();
  const connection = useApp((s) => s.connection);
  if (connection === 'closed') {
    return (
      <div className="connection-banner" role="alert" data-testid="connection-closed">
        {t('app.connectionClosed')}
        <button type="button" className="button small" onClick={() => window.location.reload()}>
          {t('app.reload')}
        </button>
      </div>
    );
  }
  if (connection !== 'reconnecting') return null;
  return (
    <div className="connection-banner" role="status" data-testid="reconnecting">
      <span className="pulse-dot" aria-hidden="true" />
      {t('app.reconnecting')}
    </div>
  );
}

export function Shell() {
  const view = useApp((s) => s.view);
  useShortcuts();
  useMorningGreeting();
  useVisualViewport();

  useEffect(() => {
    // Needed everywhere: the chat input checks for a model, Settings lists them.
    void useProviders
      .getState()
      .refresh()
      .catch(() => {});
  }, []);

  return (
    <div className="shell">
      <NavRail />
      <div className="shell-main">
        <ServerBanner />
        <ConnectionBanner />
        <Notices />
        <main className="view" id="main" data-view={view}>
          {view === 'chat' ? (
            <ChatView />
          ) : view === 'settings' ? (
            <SettingsView />
          ) : view === 'memories' ? (
            <MemoriesView />
          ) : view === 'pins' ? (
            <PinsView />
          ) : view === 'diary' ? (
            <DiaryView />
          ) : view === 'dreams' ? (
            <DreamsView />
          ) : view === 'sleep' ? (
            <SleepView />
          ) : view === 'graph' ? (
            <GraphView />
          ) : (
            <LaterView view={view} />
          )}
        </main>
      </div>
      <Toasts />
    </div>
  );
}
