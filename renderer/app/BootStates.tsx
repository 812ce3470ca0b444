import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ErrorNote } from '../components/ErrorNote.js';

export function Waking() {
  const { t } = useTranslation();
  // A quick start should not flash a message; a slow one (first run creates the database) should say so.
  const [show, setShow] = useState(false);
  useEffect(() => {
    const id = setTimeout(() => setShow(true), 400);
    return () => clearTimeout(id);
  }, []);
  return (
    <main className="fullpage" aria-busy="true">
      {show ? (
        <div className="waking" role="status">
          <div className="fullpage-mark breathing" aria-hidden="true" />
          <p>{t('app.waking')}</p>
        </div>
      ) : null}
    </main>
  );
}

export function BootFailed({ error, onRetry }: { error: unknown; onRetry: () => void }) {
  const { t } = useTranslation();
  return (
    <main className="fullpage">
      <div className="fullpage-card">
        <div className="fullpage-mark" aria-hidden="true" />
        <h1>{t('app.bootFailedTitle')}</h1>
        <p>{t('app.bootFailedBody')}</p>
        <ErrorNote error={error}>
          <button type="button" className="button primary" onClick={onRetry} autoFocus>
            {t('common.retry')}
          </button>
        </ErrorNote>
      </div>
    </main>
  );
}
