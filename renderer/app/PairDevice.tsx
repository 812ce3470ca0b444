// The phone side of pairing: opened at https://<server>/#pair=<secret>&fp=<fingerprint> (the QR code in
// Settings → Devices). Shows the fingerprint to compare with the browser's certificate details, asks
// for a name, POSTs /api/pair, keeps the device's token (localStorage) and opens Anima with it.
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { MAX_DEVICE_NAME_CHARS } from '../../shared/api.js';
import { pairThisDevice } from '../api/pair.js';
import { keepDeviceToken, type PairingLink } from '../api/token.js';
import { deviceNameFrom, fingerprintRows } from '../lib/device-name.js';
import '../styles/settings/devices.css';

export function PairDevice({ pairing }: { pairing: PairingLink }) {
  const { t } = useTranslation();
  const [name, setName] = useState(() => deviceNameFrom(navigator.userAgent));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const pair = async () => {
    setBusy(true);
    setError(null);
    try {
      const { token } = await pairThisDevice(pairing.secret, name.trim());
      keepDeviceToken(window.localStorage, token);
      // The secret leaves the address bar and history; the app starts again with the device's token.
      window.history.replaceState(null, '', window.location.pathname);
      window.location.reload();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
      setBusy(false);
    }
  };

  return (
    <main className="fullpage" data-testid="pair-device">
      <form
        className="fullpage-card pair-card"
        onSubmit={(e) => {
          e.preventDefault();
          if (name.trim() && !busy) void pair();
        }}
      >
        <div className="fullpage-mark" aria-hidden="true" />
        <h1>{t('pairPage.title')}</h1>
        <p>{t('pairPage.body', { host: window.location.host })}</p>
        <p>{t('pairPage.fingerprint')}</p>
        <pre className="fullpage-example pair-fingerprint" data-testid="pair-fingerprint">
          {fingerprintRows(pairing.fingerprint)}
        </pre>
        <div className="field">
          <label htmlFor="pair-name">{t('pairPage.nameLabel')}</label>
          <input
            id="pair-name"
            className="input"
            data-testid="pair-name"
            value={name}
            maxLength={MAX_DEVICE_NAME_CHARS}
            autoComplete="off"
            onChange={(e) => setName(e.target.value)}
          />
        </div>
        <div>
          <button type="submit" className="button primary" disabled={busy || !name.trim()} data-testid="pair-submit">
            {busy ? t('pairPage.pairing') : t('pairPage.button')}
          </button>
        </div>
        {error ? (
          <p className="pair-error" role="alert">
            {t('pairPage.failed', { message: error })}
          </p>
        ) : null}
      </form>
    </main>
  );
}
