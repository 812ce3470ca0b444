// Settings → Data → Browser link (browser mode only): the private address this tab was opened with,
// to copy for another tab, and "Reset the browser link" — a new token for the data folder, after
// which every tab and copied link with the old one is refused. This tab moves to the new link.
import { useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { api } from '../../api/index.js';
import { currentToken, linkWithToken } from '../../api/token.js';
import { CopyButton } from '../../components/CopyButton.js';
import { ErrorNote } from '../../components/ErrorNote.js';

export function BrowserLinkPanel() {
  const { t } = useTranslation();
  const titleId = useId();
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const token = currentToken(window.sessionStorage);

  const reset = async () => {
    setBusy(true);
    setError(null);
    try {
      const { token: next } = await api().call('app.resetBrowserLink', {});
      // The new link opens this tab again (the token is taken from it and leaves the address bar).
      window.location.replace(linkWithToken(window.location.origin, next));
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  return (
    <section className="data-panel" aria-labelledby={titleId} data-testid="browser-link-panel">
      <h3 className="subhead" id={titleId}>
        {t('data.browserLink.title')}
      </h3>
      <p className="help data-intro">{t('data.browserLink.intro')}</p>
      {confirming ? (
        <div className="data-card" role="alertdialog" aria-labelledby={titleId} aria-describedby={`${titleId}-confirm`}>
          <p id={`${titleId}-confirm`}>{t('data.browserLink.confirm')}</p>
          <div className="data-actions">
            <button type="button" className="button danger" disabled={busy} onClick={() => void reset()} data-testid="browser-link-reset-confirm" autoFocus>
              {t('data.browserLink.confirmButton')}
            </button>
            <button type="button" className="button ghost" disabled={busy} onClick={() => setConfirming(false)}>
              {t('common.cancel')}
            </button>
          </div>
        </div>
      ) : (
        <div className="data-actions">
          {token ? <CopyButton text={linkWithToken(window.location.origin, token)} label={t('data.browserLink.copy')} className="button" /> : null}
          <button type="button" className="button" onClick={() => setConfirming(true)} data-testid="browser-link-reset">
            {t('data.browserLink.reset')}
          </button>
        </div>
      )}
      {error ? <ErrorNote compact error={error} /> : null}
    </section>
  );
}
