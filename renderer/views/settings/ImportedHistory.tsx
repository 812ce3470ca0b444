// Settings → Memory → Sleep: "read my imported history". An import is kept as history (the night does
// not read it), so here the companion offers to read it — "You brought in 38,120 messages from Apr
// 2023 to Aug 2024. I can read them day by day in the background — about 12 nights' worth." — and,
// once asked, shows the days read of the total, why it waits when it waits, and Pause / Go on.
// Live through the host's sleep.history events; read again when an import ends.
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { ImportedHistoryStatus } from '../../../shared/api.js';
import { ErrorNote } from '../../components/ErrorNote.js';
import { Icon } from '../../components/Icon.js';
import { api } from '../../api/index.js';
import { currentLocale } from '../../i18n/index.js';
import { monthSpan } from '../../stores/import.js';

export function ImportedHistory() {
  const { t } = useTranslation();
  const [status, setStatus] = useState<ImportedHistoryStatus | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    let live = true;
    const load = () =>
      api()
        .call('sleep.importedHistory', {})
        .then((s) => live && setStatus(s))
        .catch(() => {});
    void load();
    const offs = [
      api().on('sleep.history', (s) => live && setStatus(s)),
      api().on('imports.progress', (p) => {
        if (p.state !== 'running') void load();
      }),
    ];
    return () => {
      live = false;
      offs.forEach((off) => off());
    };
  }, []);

  if (!status || status.state === 'none') return null;
  const locale = currentLocale();
  const num = (n: number) => new Intl.NumberFormat(locale).format(n);
  const span = monthSpan(status, locale);
  const act = (action: 'start' | 'pause') => {
    setBusy(true);
    setError(null);
    api()
      .call('sleep.readImportedHistory', { action })
      .then(setStatus, setError)
      .finally(() => setBusy(false));
  };
  const brought = t('importedHistory.brought', {
    count: status.messages,
    n: num(status.messages),
    span: span ? (span.same ? t('imports.spanSame', { month: span.from }) : t('imports.span', { from: span.from, to: span.to })) : '',
  });

  if (status.state === 'done') {
    return (
      <p className="help imported-history-done" data-testid="imported-history" data-state="done">
        <Icon name="check" size={14} /> {t('importedHistory.done', { count: status.daysTotal, n: num(status.daysTotal) })}
      </p>
    );
  }

  const pct = status.daysTotal ? Math.round((status.daysRead / status.daysTotal) * 100) : 0;
  const why =
    status.state === 'paused'
      ? t('importedHistory.paused')
      : status.active
        ? t('importedHistory.readingNow')
        : status.waiting
          ? t(`importedHistory.waiting.${status.waiting}`)
          : t('importedHistory.soon');
  return (
    <div className="data-card imported-history" data-testid="imported-history" data-state={status.state}>
      <div className="import-card-head">
        <Icon name="unarchive" size={18} />
        <strong>{t('importedHistory.title')}</strong>
      </div>
      {status.state === 'unread' ? (
        <>
          <p className="import-summary-line">
            {t('importedHistory.offerLine', {
              brought,
              offer: t('importedHistory.offer', { count: status.nightsLeft, n: num(Math.max(1, status.nightsLeft)) }),
            })}
          </p>
          <p className="help">{t('importedHistory.how')}</p>
        </>
      ) : (
        <>
          <div className="data-progress-top">
            <span>{t('importedHistory.progress', { read: num(status.daysRead), total: num(status.daysTotal) })}</span>
            <span className="help">{status.nightsLeft ? t('importedHistory.left', { count: status.nightsLeft, n: num(status.nightsLeft) }) : ''}</span>
          </div>
          <div
            className="progress-track data-track"
            role="progressbar"
            aria-label={t('importedHistory.title')}
            aria-valuemin={0}
            aria-valuemax={100}
            aria-valuenow={pct}
          >
            <span className="progress-fill" style={{ width: `${pct}%` }} />
          </div>
          <p className="help" aria-live="polite" data-testid="imported-history-why">
            {why}
          </p>
          {status.error ? <p className="import-note">{t('importedHistory.lastError', { error: status.error })}</p> : null}
        </>
      )}
      {error ? <ErrorNote error={error} compact /> : null}
      <div className="data-actions">
        {status.state === 'reading' ? (
          <button type="button" className="button" disabled={busy} data-testid="imported-history-pause" onClick={() => act('pause')}>
            {t('importedHistory.pause')}
          </button>
        ) : (
          <button type="button" className="button primary" disabled={busy} data-testid="imported-history-start" onClick={() => act('start')}>
            {status.state === 'paused' ? t('importedHistory.resume') : t('importedHistory.start')}
          </button>
        )}
      </div>
    </div>
  );
}
