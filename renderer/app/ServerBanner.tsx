// The desktop window's place, above every view (only in the desktop app: window.animaDesktop). On a
// paired server: "Your Anima server · 192.168.1.5" and "Use this computer". On this computer after the
// server did not answer at start: says so, with "Try again" and a dismiss. One slim line in the flow
// above the view, so it never covers the composer (and a phone has no desktop shell).
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { Icon } from '../components/Icon.js';
import { useDesktop } from '../stores/desktop.js';
import { RefusalNote, useDesktopView, type DesktopView } from '../views/settings/UseServerPanel.js';
import '../styles/settings/use-server.css';

/** The host of an origin, for one line ("192.168.1.5"); the origin itself if it is not a URL. */
export function serverHost(origin: string): string {
  try {
    return new URL(origin).hostname || origin;
  } catch {
    return origin;
  }
}

export function ServerBanner() {
  return <ServerBannerView state={useDesktopView()} />;
}

/** A full page outside the shell (the pair page, no token, waking, a failed start) with the banner over its top. */
export function OverPage({ page }: { page: ReactNode }) {
  return (
    <>
      <div className="server-banner-over">
        <ServerBanner />
      </div>
      {page}
    </>
  );
}

export function ServerBannerView({ state: { where, busy, refusal, unreachableDismissed: dismissed } }: { state: DesktopView }) {
  const { t } = useTranslation();
  if (!where) return null;

  if (where.kind === 'server') {
    return (
      <section className="server-banner" aria-label={t('serverBanner.label')} data-testid="server-banner">
        <span className="server-banner-text">
          <Icon name="server" size={15} />
          <span title={where.server.origin}>{t('serverBanner.server', { host: serverHost(where.server.origin) })}</span>
        </span>
        <button
          type="button"
          className="button ghost small"
          disabled={busy !== null}
          data-testid="server-banner-this-computer"
          onClick={() => void useDesktop.getState().backToThisComputer()}
        >
          {busy === 'thisComputer' ? t('useServer.switching') : t('useServer.useThisComputer')}
        </button>
        <RefusalNote inline refusal={refusal} actions={['thisComputer']} />
      </section>
    );
  }

  if (!where.serverUnreachable || !where.server || dismissed) return null;
  return (
    <section className="server-banner" aria-label={t('serverBanner.label')} data-testid="server-unreachable-banner">
      <span className="server-banner-text" role="status">
        <Icon name="alert" size={15} />
        <span title={where.server.origin}>{t('serverBanner.unreachable', { host: serverHost(where.server.origin) })}</span>
      </span>
      <span className="server-banner-actions">
        <button
          type="button"
          className="button ghost small"
          disabled={busy !== null}
          data-testid="server-banner-retry"
          onClick={() => void useDesktop.getState().reopen('retry')}
        >
          {busy === 'retry' ? t('useServer.opening') : t('serverBanner.tryAgain')}
        </button>
        <button
          type="button"
          className="button ghost small"
          disabled={busy === 'retry'}
          data-testid="server-banner-dismiss"
          onClick={() => useDesktop.getState().dismissUnreachable()}
        >
          {t('common.dismiss')}
        </button>
      </span>
      <RefusalNote inline refusal={refusal} actions={['retry']} />
    </section>
  );
}
