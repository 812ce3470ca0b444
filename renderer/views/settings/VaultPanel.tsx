// Settings → Data → Vault folder: a folder of markdown memory files kept in step with memory. Choose
// the folder, keep it in step (a sync at start and after each night), preview what a sync would do
// (nothing changes), sync now; the report lists what the files changed, conflicts and what was left alone.
import { useCallback, useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { VaultProblem, VaultState, VaultSyncReport } from '../../../shared/api/vault.js';
import { api } from '../../api/index.js';
import { ErrorNote } from '../../components/ErrorNote.js';
import { Icon } from '../../components/Icon.js';
import { useBusy } from '../../components/useEditor.js';
import { currentLocale } from '../../i18n/index.js';
import { useMemories } from '../../stores/memories.js';
import { FolderForm } from './FolderForm.js';
import { SwitchField } from './SwitchField.js';
import '../../styles/settings/vault.css';

export function VaultPanel() {
  const { t } = useTranslation();
  const titleId = useId();
  const switchId = useId();
  const [state, setState] = useState<VaultState | null>(null);
  const [folder, setFolder] = useState('');
  const { busy, error, setError, run: runBusy } = useBusy();
  const [report, setReport] = useState<VaultSyncReport | null>(null);
  const when = new Intl.DateTimeFormat(currentLocale(), { timeStyle: 'short' });

  const load = useCallback(async () => {
    try {
      const next = await api().call('vault.status', {});
      setState(next);
      setFolder((f) => f || next.settings.folder || '');
      setReport((r) => r ?? next.last);
    } catch (err) {
      setError(err);
    }
  }, [setError]);

  useEffect(() => {
    void load();
  }, [load]);

  // A sync in the background (at start, after a night) shows here as it ends, the panel open or not.
  useEffect(
    () =>
      api().on('vault.changed', (next) => {
        setState(next);
        if (next.last) setReport(next.last);
      }),
    [],
  );

  /** An action with the panel busy, then the panel read again; a failure is shown. */
  const run = (work: () => Promise<unknown>) =>
    runBusy(async () => {
      await work();
      await load();
    });

  const sync = (dryRun: boolean) =>
    run(async () => {
      const result = await api().call('vault.sync', { dryRun });
      setReport(result);
      // What the files changed shows in Memories at once.
      if (!dryRun && result.changes.length) await Promise.allSettled([useMemories.getState().refreshList(), useMemories.getState().refreshPins()]);
    });

  const settings = state?.settings;
  const saved = settings?.folder ?? null;
  const problems = (title: string, list: VaultProblem[], testId: string) =>
    list.length ? (
      <div className="vault-group" data-testid={testId}>
        <h5 className="vault-group-title">{title}</h5>
        <ul className="vault-list">
          {list.map((p) => (
            <li key={`${p.reason}:${p.file}`} className="vault-item" data-reason={p.reason}>
              <span className="vault-tag warn">{t(`vault.reason.${p.reason}`)}</span>
              <code className="vault-file">{p.file}</code>
              <details className="vault-details">
                <summary>{t('vault.details')}</summary>
                <p>{p.message}</p>
              </details>
            </li>
          ))}
        </ul>
      </div>
    ) : null;

  return (
    <section className="data-panel vault-panel" aria-labelledby={titleId} data-testid="vault-panel">
      <h3 className="subhead" id={titleId}>
        {t('vault.title')}
      </h3>
      <p className="help data-intro">{t('vault.intro')}</p>
      <FolderForm
        className="vault-folder-row"
        testId="vault-folder"
        words={{ label: t('vault.folderLabel'), placeholder: t('vault.folderPlaceholder'), save: t('vault.save'), stop: t('vault.clear') }}
        folder={folder}
        onFolderChange={setFolder}
        busy={busy}
        canSave={!!folder.trim() && folder.trim() !== saved}
        inUse={!!saved}
        onSave={(next) => void run(() => api().call('vault.configure', { folder: next, keepInStep: next ? (settings?.keepInStep ?? false) : false }))}
        onStop={() => {
          setReport(null);
          void run(() => api().call('vault.configure', { folder: null, keepInStep: false }));
        }}
      />
      {saved ? (
        <>
          <SwitchField
            id={switchId}
            testId="vault-keep-in-step"
            checked={settings?.keepInStep ?? false}
            onChange={(keepInStep) => void run(() => api().call('vault.configure', { folder: saved, keepInStep }))}
            label={t('vault.keepInStep')}
            help={t('vault.keepInStepHelp')}
          />
          <div className="data-actions">
            <button type="button" className="button" disabled={busy} onClick={() => void sync(true)} data-testid="vault-preview">
              <Icon name="search" size={16} />
              {t('vault.preview')}
            </button>
            <button type="button" className="button primary" disabled={busy} onClick={() => void sync(false)} data-testid="vault-sync">
              <Icon name="regenerate" size={16} />
              {busy ? t('vault.running') : t('vault.syncNow')}
            </button>
          </div>
        </>
      ) : null}
      {state?.problem ? (
        <p className="help vault-problem" role="alert">
          {t('vault.problem', { message: state.problem })}
        </p>
      ) : null}
      {error ? <ErrorNote error={error} detailVisible /> : null}
      {report && saved ? (
        <div className="data-card vault-report" role="status" data-testid={report.dryRun ? 'vault-preview-report' : 'vault-report'}>
          <p className="data-done-line vault-report-title">
            <Icon name={report.dryRun ? 'search' : 'check'} size={16} />
            <span>{report.dryRun ? t('vault.previewTitle') : t('vault.doneTitle', { time: when.format(new Date(report.at)) })}</span>
          </p>
          {report.changes.length ? (
            <div className="vault-group" data-testid="vault-changes">
              <h5 className="vault-group-title">{t('vault.changes')}</h5>
              <ul className="vault-list">
                {report.changes.map((c, i) => (
                  <li key={`${c.file}:${c.kind}:${i}`} className="vault-item" data-kind={c.kind}>
                    <span className="vault-tag">{t(`vault.kind.${c.kind}`)}</span>
                    <span className="vault-text">{c.text}</span>
                    <code className="vault-file">{c.file}</code>
                  </li>
                ))}
              </ul>
            </div>
          ) : (
            <p className="help">{t('vault.nothing')}</p>
          )}
          {problems(t('vault.conflicts'), report.conflicts, 'vault-conflicts')}
          {problems(t('vault.ignored'), report.ignored, 'vault-ignored')}
          <p className="help vault-files">
            {t(report.dryRun ? 'vault.filesPreview' : 'vault.files', {
              written: t('vault.written', { count: report.written.length }),
              removed: t('vault.removed', { count: report.removed.length }),
              unchanged: report.unchanged,
            })}
          </p>
          {!report.dryRun && report.changes.length ? <p className="help">{t('vault.undoHint')}</p> : null}
        </div>
      ) : null}
    </section>
  );
}
