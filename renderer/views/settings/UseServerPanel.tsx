// Settings → Devices in the desktop app (window.animaDesktop; nothing of this shows in a browser or on
// a phone). On this computer: "Use my Anima server" — paste the pairing link the server shows under its
// QR code and Connect; with a server remembered, its address and since when, "Open it again" and
// "Forget this server" (confirmed; Escape closes the question). On the server: where this window is,
// and "Use this computer" (the banner above every view says the same).
import { useEffect, useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { DesktopWhere, RememberedServer } from '../../../shared/bridge.js';
import { useTimeFormat } from '../../app/hooks.js';
import { Icon } from '../../components/Icon.js';
import { desktopShell, useDesktop, type DesktopAction, type DesktopRefusal } from '../../stores/desktop.js';
import '../../styles/settings/use-server.css';

/** What the panel and the banner draw from: the store's state (null `where` outside the desktop app). */
export interface DesktopView {
  where: DesktopWhere | null;
  busy: DesktopAction | null;
  refusal: DesktopRefusal | null;
  unreachableDismissed: boolean;
}

/** Asks the shell where this window is, once it is shown (the banner asks too; the answer is shared). */
export function useDesktopView(): DesktopView {
  const where = useDesktop((s) => s.where);
  const busy = useDesktop((s) => s.busy);
  const refusal = useDesktop((s) => s.refusal);
  const unreachableDismissed = useDesktop((s) => s.unreachableDismissed);
  useEffect(() => {
    if (desktopShell()) void useDesktop.getState().load();
  }, []);
  return { where: desktopShell() ? where : null, busy, refusal, unreachableDismissed };
}

/** The refusal of one of `actions`, in words: what happened and what to do (the shell's own words small). */
export function RefusalNote({ refusal, actions, inline = false }: { refusal: DesktopRefusal | null; actions: DesktopAction[]; inline?: boolean }) {
  const { t } = useTranslation();
  if (!refusal || !actions.includes(refusal.action)) return null;
  const detail = refusal.message.trim();
  // Opening the remembered server again, no link is involved: the certificate it names is the one kept.
  const what =
    refusal.code === 'certificate_mismatch' && (refusal.action === 'reopen' || refusal.action === 'retry')
      ? t('useServer.certificateChanged')
      : t(`useServer.refused.${refusal.code}.what`);
  if (inline) {
    // One quiet line, as in the banner: the words, and the shell's own on hover.
    return (
      <span className="refusal-inline" role="alert" title={detail || undefined} data-testid="use-server-refusal" data-refusal-code={refusal.code}>
        {what} {t(`useServer.refused.${refusal.code}.todo`)}
      </span>
    );
  }
  return (
    <div className="error-note compact" role="alert" data-testid="use-server-refusal" data-refusal-code={refusal.code}>
      <Icon name="alert" size={18} className="error-note-icon" />
      <div className="error-note-body">
        <p className="error-note-what">{what}</p>
        <p className="error-note-todo">{t(`useServer.refused.${refusal.code}.todo`)}</p>
        {detail ? (
          <details className="error-note-detail">
            <summary>{t('common.details')}</summary>
            <code>{detail}</code>
          </details>
        ) : null}
      </div>
    </div>
  );
}

/** On this computer: connect to a server, or open the remembered one again. Null outside the desktop app. */
export function UseServerPanel() {
  return <UseServerPanelView state={useDesktopView()} />;
}

export function UseServerPanelView({ state }: { state: DesktopView }) {
  const { t } = useTranslation();
  const { where } = state;
  const titleId = useId();
  if (!where || where.kind !== 'local') return null;
  return (
    <section className="data-panel use-server" aria-labelledby={titleId} data-testid="use-server">
      <h3 className="subhead" id={titleId}>
        {t('useServer.title')}
      </h3>
      <p className="help">{t('useServer.intro')}</p>
      {where.server ? <RememberedCard server={where.server} state={state} /> : null}
      <ConnectForm state={state} again={where.server !== null} />
    </section>
  );
}

function ConnectForm({ state: { busy, refusal }, again }: { state: DesktopView; again: boolean }) {
  const { t } = useTranslation();
  const [link, setLink] = useState('');
  const inputId = useId();
  const helpId = useId();
  const connecting = busy === 'connect';

  return (
    <form
      className="use-server-form"
      aria-busy={connecting || undefined}
      onSubmit={(e) => {
        e.preventDefault();
        void useDesktop.getState().connect(link);
      }}
    >
      <label className="field-label" htmlFor={inputId}>
        {again ? t('useServer.linkLabelAgain') : t('useServer.linkLabel')}
      </label>
      <p className="help" id={helpId}>
        {t('useServer.linkHelp')}
        {again ? ` ${t('useServer.replaces')}` : null}
      </p>
      <div className="use-server-row">
        <input
          id={inputId}
          className="input use-server-link"
          type="text"
          inputMode="url"
          autoComplete="off"
          autoCapitalize="off"
          spellCheck={false}
          placeholder="https://192.168.1.5:7431/#pair=…&fp=…"
          aria-describedby={helpId}
          aria-invalid={refusal?.action === 'connect' && refusal.code === 'invalid_link' ? true : undefined}
          readOnly={connecting}
          value={link}
          data-testid="use-server-link"
          onChange={(e) => {
            setLink(e.target.value);
            if (useDesktop.getState().refusal?.action === 'connect') useDesktop.getState().clearRefusal();
          }}
        />
        <button type="submit" className="button primary" disabled={busy !== null || !link.trim()} data-testid="use-server-connect">
          {connecting ? (
            <>
              <span className="pulse-dot" aria-hidden="true" />
              {t('useServer.connecting')}
            </>
          ) : (
            t('useServer.connect')
          )}
        </button>
      </div>
      <RefusalNote refusal={refusal} actions={['connect']} />
    </form>
  );
}

function RememberedCard({ server, state: { busy, refusal } }: { server: RememberedServer; state: DesktopView }) {
  const { t } = useTranslation();
  const { when } = useTimeFormat();
  const [confirming, setConfirming] = useState(false);
  const forgetButton = useRef<HTMLButtonElement>(null);
  const confirmId = useId();

  const closeConfirm = () => {
    setConfirming(false);
    // Back where the question came from, so the keyboard does not start over from the page's top.
    requestAnimationFrame(() => forgetButton.current?.focus());
  };

  return (
    <div className="data-card use-server-remembered" data-testid="use-server-remembered">
      <div className="use-server-remembered-text">
        <span className="field-label">{t('useServer.rememberedTitle')}</span>
        <span className="use-server-origin" data-testid="use-server-origin">
          {server.origin}
        </span>
        <span className="help">{t('useServer.rememberedSince', { date: when(server.since) })}</span>
      </div>
      <div className="data-actions">
        <button
          type="button"
          className="button primary small"
          disabled={busy !== null}
          data-testid="use-server-reopen"
          onClick={() => void useDesktop.getState().reopen('reopen')}
        >
          {busy === 'reopen' ? t('useServer.opening') : t('useServer.reopen')}
        </button>
        <button
          type="button"
          ref={forgetButton}
          className="button small"
          disabled={busy !== null}
          aria-expanded={confirming}
          data-testid="use-server-forget"
          onClick={() => setConfirming(true)}
        >
          {t('useServer.forget')}
        </button>
      </div>
      <RefusalNote refusal={refusal} actions={['reopen', 'forget']} />
      {confirming ? (
        <div
          className="data-card use-server-confirm"
          role="alertdialog"
          aria-describedby={confirmId}
          data-testid="use-server-forget-confirm"
          onKeyDown={(e) => {
            if (e.key === 'Escape') {
              e.stopPropagation();
              closeConfirm();
            }
          }}
        >
          <p id={confirmId}>{t('useServer.forgetConfirm', { origin: server.origin })}</p>
          <div className="data-actions">
            <button
              type="button"
              className="button danger small"
              autoFocus
              disabled={busy !== null}
              data-testid="use-server-forget-yes"
              onClick={() => {
                void useDesktop
                  .getState()
                  .forget()
                  .then(() => setConfirming(false));
              }}
            >
              {busy === 'forget' ? t('useServer.forgetting') : t('useServer.forgetButton')}
            </button>
            <button type="button" className="button ghost small" disabled={busy !== null} onClick={closeConfirm}>
              {t('common.cancel')}
            </button>
          </div>
        </div>
      ) : null}
    </div>
  );
}

/** On a paired server: where this window is, and the way back. Device management is the server's own. */
export function OnServerPanel({ origin }: { origin: string }) {
  return <OnServerPanelView origin={origin} state={useDesktopView()} />;
}

export function OnServerPanelView({ origin, state: { busy, refusal } }: { origin: string; state: DesktopView }) {
  const { t } = useTranslation();
  return (
    <div className="devices" data-testid="use-server-on-server">
      <div className="data-card use-server-here">
        <p>{t('useServer.onServer', { origin })}</p>
        <p className="help">{t('useServer.onServerDevices')}</p>
        <div className="data-actions">
          <button
            type="button"
            className="button primary small"
            disabled={busy !== null}
            data-testid="use-server-this-computer"
            onClick={() => void useDesktop.getState().backToThisComputer()}
          >
            {busy === 'thisComputer' ? t('useServer.switching') : t('useServer.useThisComputer')}
          </button>
        </div>
        <RefusalNote refusal={refusal} actions={['thisComputer']} />
      </div>
    </div>
  );
}
