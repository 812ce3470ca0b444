// Settings → Data → Export: everything in one zip (the JSON, a folder of readable markdown, a SQL copy
// of the database — never an API key), written into the data folder's exports/ with a progress bar and
// Cancel; when done, the file's name, size and where it is — and in browser mode, where the person may
// not be able to reach the folder, a link that downloads it.
import { useEffect, useId } from 'react';
import { useTranslation } from 'react-i18next';
import { api } from '../../api/index.js';
import { CopyButton } from '../../components/CopyButton.js';
import { ErrorNote } from '../../components/ErrorNote.js';
import { Icon } from '../../components/Icon.js';
import { currentLocale } from '../../i18n/index.js';
import { useApp } from '../../stores/app.js';
import { useExport } from '../../stores/export.js';
import { formatBytes } from '../../stores/models.js';
import '../../styles/settings/export.css';

export function ExportPanel() {
  const { t } = useTranslation();
  const { status, busy, error, resume, start, cancel } = useExport();
  const browserMode = useApp((s) => s.info?.mode === 'browser');
  const titleId = useId();
  useEffect(() => {
    void resume();
  }, [resume]);
  const running = status?.state === 'running';
  const percent = status ? Math.max(0, Math.min(100, Math.floor(status.fraction * 100))) : 0;
  const num = (n: number) => new Intl.NumberFormat(currentLocale()).format(n);
  const downloadUrl = status?.state === 'done' && browserMode ? api().exportDownloadUrl?.(status.fileName) : undefined;
  return (
    <section className="data-panel export-panel" aria-labelledby={titleId} data-testid="export-panel">
      <h3 className="subhead" id={titleId}>
        {t('export.title')}
      </h3>
      <p className="help data-intro">{t('export.intro')}</p>
      {running ? (
        <div className="data-card" data-testid="export-running">
          <div className="data-progress-top">
            <span>{t(`export.phase.${status.phase}`)}</span>
            <span className="mono">{t('export.percent', { percent })}</span>
          </div>
          <div
            className="progress-track data-track"
            role="progressbar"
            aria-label={t('export.progressLabel')}
            aria-valuemin={0}
            aria-valuemax={100}
            aria-valuenow={percent}
          >
            <span className="progress-fill" style={{ width: `${percent}%` }} />
          </div>
          <div className="data-actions">
            <button type="button" className="button" disabled={busy} onClick={() => void cancel()} data-testid="export-cancel">
              {t('export.cancel')}
            </button>
          </div>
        </div>
      ) : (
        <div className="data-actions">
          <button type="button" className="button primary" disabled={busy} onClick={() => void start()} data-testid="export-start">
            <Icon name="archive" size={16} />
            {t('export.start')}
          </button>
        </div>
      )}
      {status?.state === 'done' ? (
        <div className="data-card" data-testid="export-done" role="status">
          <p className="data-done-line">
            <Icon name="check" size={16} />
            <span>
              {t('export.done', {
                file: status.fileName,
                size: formatBytes(status.bytes ?? 0, currentLocale()),
                conversations: num(status.counts?.conversations ?? 0),
                messages: num(status.counts?.messages ?? 0),
                memories: num(status.counts?.memories ?? 0),
              })}
            </span>
          </p>
          <p className="help">{t('export.where')}</p>
          <div className="path-row">
            <Icon name="folder" size={18} />
            <code className="path" data-testid="export-path">
              {status.path}
            </code>
            {downloadUrl ? (
              <a
                className="button small primary export-download"
                href={downloadUrl}
                download={status.fileName}
                aria-label={t('export.downloadLabel', { file: status.fileName })}
                data-testid="export-download"
              >
                <Icon name="arrowDown" size={16} />
                {t('export.download')}
              </a>
            ) : null}
            <CopyButton text={status.path} label={t('export.copyPath')} className="button small" />
          </div>
        </div>
      ) : null}
      {status?.state === 'cancelled' ? (
        <p className="help" role="status" data-testid="export-cancelled">
          {t('export.cancelled')}
        </p>
      ) : null}
      {status?.state === 'failed' ? <ErrorNote error={status.error}>{<span className="help">{t('export.failed')}</span>}</ErrorNote> : null}
      {error ? <ErrorNote error={error} /> : null}
    </section>
  );
}
