import { useTranslation } from 'react-i18next';

/** Browser mode opened without its private link (or with one from an earlier run). */
export function NoToken({ expired = false }: { expired?: boolean }) {
  const { t } = useTranslation();
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
