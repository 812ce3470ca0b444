// Settings → Data → Backups: the safety copies there are (the nightly ones, those made by you, the
// scheduled ones in your folder, the state before each restore) with their date, size and what they
// hold; "Back up now" with a progress bar; your own folder and its schedule; and Restore, which says
// what it will do before it does it, and tells how to undo it after.
import { useCallback, useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import {
  BACKUP_KEEP,
  type BackupCopy,
  type BackupCounts,
  type BackupProgress,
  type BackupSchedule,
  type BackupsState,
  type RestoreResult,
} from '../../../shared/api/backups.js';
import { api } from '../../api/index.js';
import { ErrorNote } from '../../components/ErrorNote.js';
import { Icon } from '../../components/Icon.js';
import { LoadPanel } from '../../components/LoadPanel.js';
import { useBusy } from '../../components/useEditor.js';
import { currentLocale } from '../../i18n/index.js';
import { useApp } from '../../stores/app.js';
import { useConversations } from '../../stores/conversations.js';
import { useMemories } from '../../stores/memories.js';
import { formatBytes } from '../../stores/models.js';
import { FolderForm } from './FolderForm.js';
import '../../styles/settings/backups.css';

export function BackupsPanel() {
  const { t } = useTranslation();
  const titleId = useId();
  const scheduleId = useId();
  const keepId = useId();
  const [state, setState] = useState<BackupsState | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [progress, setProgress] = useState<BackupProgress | null>(null);
  const { busy, error, run: runBusy } = useBusy();
  const [confirming, setConfirming] = useState<string | null>(null);
  const [restored, setRestored] = useState<RestoreResult | null>(null);
  const [folder, setFolder] = useState('');
  const locale = currentLocale();
  const when = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short' });

  const load = useCallback(async () => {
    try {
      const next = await api().call('backups.list', {});
      setState(next);
      setFolder((f) => f || next.settings.folder || '');
      setProgress(next.running);
      setLoadError(null);
    } catch (err) {
      setLoadError(err);
    }
  }, []);

  useEffect(() => {
    void load();
    return api().on('backups.progress', (p) => {
      setProgress(p.phase === 'done' || p.phase === 'failed' ? null : p);
      if (p.phase === 'done') void load();
    });
  }, [load]);

  /** An action with the panel busy, then the panel read again; a failure is shown. */
  const run = (work: () => Promise<unknown>) =>
    runBusy(async () => {
      await work();
      await load();
    });

  const restore = (copy: BackupCopy) =>
    run(async () => {
      setRestored(null);
      const result = await api().call('backups.restore', { id: copy.id });
      setConfirming(null);
      setRestored(result);
      // Everything the window shows came from the data before: read it again.
      await Promise.allSettled([
        useApp.getState().reloadSettings(),
        useConversations.getState().refresh(),
        useMemories.getState().refreshList(),
        useMemories.getState().refreshPins(),
      ]);
    });

  const label = (c: BackupCopy) => {
    if (c.where === 'previous') return t('backups.kind.previous', { date: when.format(new Date(c.createdAt)) });
    if (c.kind === 'nightly' && c.sleepDay) return t('backups.kind.nightlyOf', { day: c.sleepDay });
    return t(`backups.kind.${c.kind}`);
  };
  const counted = (n: BackupCounts) =>
    t('backups.contents', {
      conversations: t('backups.conversations', { count: n.conversations }),
      messages: t('backups.messages', { count: n.messages }),
      memories: t('backups.memories', { count: n.memories }),
    });
  const contents = (c: BackupCopy) => (c.counts ? counted(c.counts) : t('backups.contentsUnknown'));
  const percent = progress ? Math.floor((progress.done / Math.max(1, progress.total)) * 100) : 0;
  const settings = state?.settings;
  const folderReady = !!settings?.folder && !state?.folderProblem;

  return (
    <section className="data-panel backups-panel" aria-labelledby={titleId} data-testid="backups-panel">
      <h3 className="subhead" id={titleId}>
        {t('backups.title')}
      </h3>
      <p className="help data-intro">{t('backups.intro')}</p>
      <div className="data-actions">
        <button
          type="button"
          className="button primary"
          disabled={busy || !!progress}
          onClick={() => void run(() => api().call('backups.makeNow', { where: 'data' }))}
          data-testid="backups-make-now"
        >
          <Icon name="archive" size={16} />
          {t('backups.makeNow')}
        </button>
        {folderReady ? (
          <button
            type="button"
            className="button"
            disabled={busy || !!progress}
            onClick={() => void run(() => api().call('backups.makeNow', { where: 'folder' }))}
            data-testid="backups-make-folder"
          >
            <Icon name="folder" size={16} />
            {t('backups.makeNowFolder')}
          </button>
        ) : null}
      </div>
      {progress ? (
        <div className="data-card" data-testid="backups-running">
          <div className="data-progress-top">
            <span>{t(`backups.phase.${progress.phase}`)}</span>
            <span className="mono">{t('backups.percent', { percent })}</span>
          </div>
          <div
            className="progress-track data-track"
            role="progressbar"
            aria-label={t('backups.progressLabel')}
            aria-valuemin={0}
            aria-valuemax={100}
            aria-valuenow={percent}
          >
            <span className="progress-fill" style={{ width: `${percent}%` }} />
          </div>
        </div>
      ) : null}
      {restored ? (
        <div className="data-card" role="status" data-testid="backups-restored">
          <p className="data-done-line">
            <Icon name="check" size={16} />
            <span>{t('backups.restored', { contents: counted(restored.counts) })}</span>
          </p>
          <p className="help">{t('backups.undoHint')}</p>
        </div>
      ) : null}
      {error ? <ErrorNote error={error} detailVisible /> : null}
      <LoadPanel error={state ? null : loadError} loaded={!!state || !!loadError} onRetry={() => void load()}>
        {state && state.copies.length === 0 ? (
          <p className="help" data-testid="backups-empty">
            {t('backups.empty')}
          </p>
        ) : null}
        {state && state.copies.length > 0 ? (
          <ul className="backup-list" data-testid="backup-list">
            {state.copies.map((c) => (
              <li key={c.id} className="backup-item" data-testid="backup-item" data-kind={c.kind}>
                <div className="backup-row">
                  <div className="backup-main">
                    <span className="backup-title">{label(c)}</span>
                    <span className="backup-meta">
                      <time dateTime={c.createdAt}>{when.format(new Date(c.createdAt))}</time>
                      {' · '}
                      {formatBytes(c.bytes, locale)}
                      {' · '}
                      {t(`backups.where.${c.where}`)}
                    </span>
                    <span className="backup-contents">
                      {contents(c)}
                      {c.images === null
                        ? ` · ${t('backups.databaseOnly')}`
                        : c.images.files > 0
                          ? ` · ${t('backups.pictures', { count: c.images.files })}`
                          : ''}
                    </span>
                  </div>
                  {confirming === c.id ? null : (
                    <button
                      type="button"
                      className="button small"
                      disabled={busy || !!progress}
                      onClick={() => setConfirming(c.id)}
                      aria-label={t('backups.restoreLabel', { name: label(c), date: when.format(new Date(c.createdAt)) })}
                      data-testid="backup-restore"
                    >
                      {t('backups.restore')}
                    </button>
                  )}
                </div>
                {confirming === c.id ? (
                  <div className="backup-confirm" role="group" aria-label={t('backups.confirmTitle')} data-testid="backup-confirm">
                    <p>{t('backups.confirm', { date: when.format(new Date(c.createdAt)) })}</p>
                    <div className="data-actions">
                      <button
                        type="button"
                        className="button primary"
                        disabled={busy}
                        onClick={() => void restore(c)}
                        data-testid="backup-confirm-restore"
                        autoFocus
                      >
                        {t('backups.confirmRestore')}
                      </button>
                      <button type="button" className="button" disabled={busy} onClick={() => setConfirming(null)}>
                        {t('backups.cancel')}
                      </button>
                    </div>
                  </div>
                ) : null}
              </li>
            ))}
          </ul>
        ) : null}
      </LoadPanel>
      {settings ? (
        <div className="backups-folder" data-testid="backups-folder">
          <h4 className="backups-subhead">{t('backups.folderTitle')}</h4>
          <p className="help">{t('backups.folderHelp')}</p>
          <FolderForm
            className="backups-folder-row"
            testId="backups-folder"
            words={{
              label: t('backups.folderLabel'),
              placeholder: t('backups.folderPlaceholder'),
              save: t('backups.folderSave'),
              stop: t('backups.folderClear'),
            }}
            folder={folder}
            onFolderChange={setFolder}
            busy={busy}
            inUse={!!settings.folder}
            onSave={(next) => void run(() => api().call('backups.setFolder', { folder: next }))}
            onStop={() => void run(() => api().call('backups.setFolder', { folder: null }))}
          />
          {state?.folderProblem ? (
            <p className="help backups-problem" role="alert">
              {state.folderProblem}
            </p>
          ) : null}
          {settings.folder ? (
            <div className="backups-schedule">
              <label htmlFor={scheduleId}>{t('backups.schedule')}</label>
              <select
                id={scheduleId}
                className="input"
                value={settings.schedule}
                disabled={busy}
                onChange={(e) => void run(() => api().call('backups.setSchedule', { schedule: e.target.value as BackupSchedule }))}
                data-testid="backups-schedule"
              >
                {(['off', 'daily', 'weekly'] as const).map((s) => (
                  <option key={s} value={s}>
                    {t(`backups.scheduleOption.${s}`)}
                  </option>
                ))}
              </select>
              <label htmlFor={keepId}>{t('backups.keep')}</label>
              <input
                id={keepId}
                className="input backups-keep"
                type="number"
                min={BACKUP_KEEP.min}
                max={BACKUP_KEEP.max}
                defaultValue={settings.keep}
                disabled={busy}
                onBlur={(e) => {
                  const keep = Number(e.target.value);
                  if (Number.isInteger(keep) && keep >= BACKUP_KEEP.min && keep <= BACKUP_KEEP.max && keep !== settings.keep) {
                    void run(() => api().call('backups.setSchedule', { keep }));
                  }
                }}
              />
              {state?.nextScheduledAt ? <p className="help">{t('backups.next', { date: when.format(new Date(state.nextScheduledAt)) })}</p> : null}
            </div>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
