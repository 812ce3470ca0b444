import { useTranslation } from 'react-i18next';
import { hasDeviceToken, pairingFromHash } from '../api/token.js';
import { PairDevice } from './PairDevice.js';

/** Browser mode opened without its private link (or with one from an earlier run); or a device opened with a pairing code. */
export function NoToken({ expired = false }: { expired?: boolean }) {
  const { t } = useTranslation();
  const pairing = pairingFromHash(window.location.hash);
  if (pairing && !expired) return <PairDevice pairing={pairing} />;
  if (expired && hasDeviceToken(localStorageOrNull())) {
    return (
      <main className="fullpage" data-testid="no-token">
        <div className="fullpage-card">
          <div className="fullpage-mark" aria-hidden="true" />
          <h1>{t('noToken.deviceExpiredTitle')}</h1>
          <p>{t('noToken.deviceExpiredBody')}</p>
        </div>
      </main>
    );
  }
  return (
    <main className="fullpage" data-testid="no-token">
      <div className="fullpage-card">
        <div className="fullpage-mark" aria-hidden="true" />
        <h1>{expired ? t('noToken.expiredTitle') : t('noToken.title')}</h1>
        <p>{expired ? t('noToken.expiredBody') : t('noToken.body')}</p>
        <p>{t('noToken.howTo', { command: 'npm start' })}</p>
        <pre className="fullpage-example">{t('noToken.example')}</pre>
      </div>
    </main>
  );
}

function localStorageOrNull(): Pick<Storage, 'getItem'> {
  try {
    return window.localStorage;
  } catch {
    return { getItem: () => null };
  }
}
