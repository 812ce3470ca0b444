// The audit log: every background model call the sleep cycle made — when, what for, which step and
// model, how long, how many tokens, and whether the answer was usable. A row opens the call's full
// prompt and response.
import { useEffect, useId, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import type { AuditEntry } from '../../../shared/api.js';
import { useTimeFormat } from '../../app/hooks.js';
import { CopyButton } from '../../components/CopyButton.js';
import { Icon } from '../../components/Icon.js';
import { LoadPanel } from '../../components/LoadPanel.js';
import { currentLocale } from '../../i18n/index.js';
import { purposeLabel } from '../../lib/auditPurpose.js';
import { formatCompact, formatDuration } from '../../lib/night.js';
import { AUDIT_FILTERS, AUDIT_PAGE, useSleep } from '../../stores/sleep.js';
import { AUDIT_ANCHOR } from './FailedNight.js';
import { useStepName } from './RunLog.js';

function StatusBadge({ status }: { status: AuditEntry['status'] }) {
  const { t } = useTranslation();
  return <span className={`audit-badge is-${status}`}>{t(`sleep.audit.status.${status}`)}</span>;
}

function tokens(entry: AuditEntry, locale: string, t: (k: string, o?: Record<string, unknown>) => string): string {
  if (entry.promptTokens === null && entry.completionTokens === null) return t('sleep.audit.noTokens');
  return t('sleep.audit.tokens', {
    prompt: entry.promptTokens === null ? '?' : formatCompact(entry.promptTokens, locale),
    completion: entry.completionTokens === null ? '?' : formatCompact(entry.completionTokens, locale),
  });
}

/** The call in full, in a modal dialog: Escape or the close button returns to the row. */
function AuditDialog() {
  const { t } = useTranslation();
  const detail = useSleep((s) => s.auditDetail)!;
  const close = useSleep((s) => s.closeAudit);
  const stepName = useStepName();
  const { full } = useTimeFormat();
  const locale = currentLocale();
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const d = detail.data;

  useEffect(() => {
    const dialog = ref.current;
    // The row's button had the keyboard; it gets it back when the dialog goes.
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    if (dialog && !dialog.open) dialog.showModal();
    return () => {
      dialog?.close();
      if (opener?.isConnected) opener.focus();
    };
  }, []);

  return (
    <dialog
      ref={ref}
      className="audit-dialog"
      data-testid="audit-detail"
      data-id={detail.id}
      aria-labelledby={titleId}
      onCancel={(e) => {
        e.preventDefault();
        close();
      }}
      onClick={(e) => {
        // A click on the backdrop (the dialog element itself, outside its content) closes it.
        if (e.target === e.currentTarget) close();
      }}
    >
      <div className="audit-dialog-inner">
        <header className="audit-dialog-head">
          <h2 id={titleId}>
            {d ? t('sleep.audit.detailTitle', { id: d.id, purpose: purposeLabel(d.purpose, t) }) : t('sleep.audit.detailLoading', { id: detail.id })}
          </h2>
          <button type="button" className="icon-button" data-testid="audit-close" aria-label={t('common.close')} onClick={close}>
            <Icon name="close" size={18} />
          </button>
        </header>
        <LoadPanel error={detail.error} loaded={Boolean(d)} compact onRetry={() => void useSleep.getState().openAudit(detail.id)}>
          {d ? (
            <div className="audit-dialog-body">
              <dl className="audit-facts">
                <div>
                  <dt>{t('sleep.audit.cols.time')}</dt>
                  <dd>{full(d.createdAt)}</dd>
                </div>
                <div>
                  <dt>{t('sleep.audit.cols.status')}</dt>
                  <dd>
                    <StatusBadge status={d.status} />
                  </dd>
                </div>
                <div>
                  <dt>{t('sleep.audit.cols.step')}</dt>
                  <dd>
                    {stepName(d.stepId)}
                    {d.runId !== null ? <span className="audit-muted"> · {t('sleep.audit.run', { id: d.runId })}</span> : null}
                  </dd>
                </div>
                <div>
                  <dt>{t('sleep.audit.cols.model')}</dt>
                  <dd className="mono">{d.model}</dd>
                </div>
                <div>
                  <dt>{t('sleep.audit.purposeId')}</dt>
                  <dd className="mono" data-testid="audit-purpose-id">
                    {d.purpose}
                  </dd>
                </div>
                <div>
                  <dt>{t('sleep.audit.cols.duration')}</dt>
                  <dd>{formatDuration(d.durationMs, locale)}</dd>
                </div>
                <div>
                  <dt>{t('sleep.audit.cols.tokens')}</dt>
                  <dd>{tokens(d, locale, t)}</dd>
                </div>
              </dl>
              {d.error ? (
                <p className="audit-error" role="note">
                  <Icon name="alert" size={15} />
                  <span>{d.error}</span>
                </p>
              ) : null}
              <section className="audit-text" aria-labelledby={`${titleId}-prompt`}>
                <div className="audit-text-head">
                  <h3 id={`${titleId}-prompt`}>{t('sleep.audit.prompt')}</h3>
                  <span className="audit-muted">{t('sleep.audit.chars', { count: d.prompt.length, formatted: formatCompact(d.prompt.length, locale) })}</span>
                  <CopyButton text={d.prompt} label={t('common.copy')} iconSize={14} />
                </div>
                <pre className="audit-pre" data-testid="audit-prompt" tabIndex={0} aria-labelledby={`${titleId}-prompt`}>
                  {d.prompt}
                </pre>
              </section>
              <section className="audit-text" aria-labelledby={`${titleId}-response`}>
                <div className="audit-text-head">
                  <h3 id={`${titleId}-response`}>{t('sleep.audit.response')}</h3>
                  <span className="audit-muted">
                    {t('sleep.audit.chars', { count: d.response.length, formatted: formatCompact(d.response.length, locale) })}
                  </span>
                  {d.response ? <CopyButton text={d.response} label={t('common.copy')} iconSize={14} /> : null}
                </div>
                {d.response ? (
                  <pre className="audit-pre" data-testid="audit-response" tabIndex={0} aria-labelledby={`${titleId}-response`}>
                    {d.response}
                  </pre>
                ) : (
                  <p className="help">{t('sleep.audit.noResponse')}</p>
                )}
              </section>
            </div>
          ) : null}
        </LoadPanel>
      </div>
    </dialog>
  );
}

export function AuditLog() {
  const { t } = useTranslation();
  const audit = useSleep((s) => s.audit);
  const open = useSleep((s) => s.auditDetail !== null);
  const openId = useSleep((s) => s.auditDetail?.id ?? null);
  const { when, full } = useTimeFormat();
  const stepName = useStepName();
  const locale = currentLocale();
  const titleId = useId();
  const from = audit.total ? audit.offset + 1 : 0;
  const to = audit.offset + audit.items.length;

  return (
    <section className="sleep-card audit" id={AUDIT_ANCHOR} tabIndex={-1} data-testid="audit" aria-labelledby={titleId}>
      <div className="audit-head">
        <div>
          <h2 className="sleep-section-title" id={titleId}>
            {t('sleep.audit.title')}
          </h2>
          <p className="help">{t('sleep.audit.intro')}</p>
        </div>
        <div className="segmented" role="group" aria-label={t('sleep.audit.filterLabel')} data-testid="audit-filter" data-value={audit.filter}>
          {AUDIT_FILTERS.map((f) => (
            <button
              key={f}
              type="button"
              className="segment"
              data-filter={f}
              aria-pressed={audit.filter === f}
              onClick={() => useSleep.getState().setAuditFilter(f)}
            >
              {t(`sleep.audit.filters.${f}`)}
            </button>
          ))}
        </div>
      </div>

      <LoadPanel error={audit.items.length ? null : audit.error} loaded={audit.loaded} compact onRetry={() => void useSleep.getState().refreshAudit()}>
        {!audit.items.length ? (
          <p className="sleep-empty-note">{audit.filter === 'all' ? t('sleep.audit.empty') : t('sleep.audit.emptyFiltered')}</p>
        ) : (
          <>
            <div className="audit-scroll">
              <table className="audit-table" aria-busy={audit.loading || undefined}>
                <thead>
                  <tr>
                    <th scope="col">{t('sleep.audit.cols.time')}</th>
                    <th scope="col">{t('sleep.audit.cols.purpose')}</th>
                    <th scope="col">{t('sleep.audit.cols.step')}</th>
                    <th scope="col">{t('sleep.audit.cols.model')}</th>
                    <th scope="col" className="num">
                      {t('sleep.audit.cols.duration')}
                    </th>
                    <th scope="col" className="num">
                      {t('sleep.audit.cols.tokens')}
                    </th>
                    <th scope="col">{t('sleep.audit.cols.status')}</th>
                  </tr>
                </thead>
                <tbody>
                  {audit.items.map((e) => (
                    <tr
                      key={e.id}
                      className={openId === e.id ? 'selected' : undefined}
                      data-testid="audit-row"
                      data-id={e.id}
                      data-status={e.status}
                      onClick={() => void useSleep.getState().openAudit(e.id)}
                    >
                      <td className="audit-when">
                        <time dateTime={e.createdAt} title={full(e.createdAt)}>
                          {when(e.createdAt, true)}
                        </time>
                      </td>
                      <td>
                        <button
                          type="button"
                          className="audit-open"
                          aria-haspopup="dialog"
                          aria-expanded={openId === e.id}
                          title={e.purpose}
                          onClick={(ev) => {
                            ev.stopPropagation();
                            void useSleep.getState().openAudit(e.id);
                          }}
                        >
                          {purposeLabel(e.purpose, t)}
                        </button>
                      </td>
                      <td>{e.stepId ? stepName(e.stepId) : '—'}</td>
                      <td className="mono audit-model" title={e.model}>
                        {e.model}
                      </td>
                      <td className="num">{formatDuration(e.durationMs, locale)}</td>
                      <td className="num">{tokens(e, locale, t)}</td>
                      <td>
                        <StatusBadge status={e.status} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <div className="audit-pager">
              <span>
                {t('sleep.audit.range', { from: formatCompact(from, locale), to: formatCompact(to, locale), total: formatCompact(audit.total, locale) })}
              </span>
              <div className="audit-pager-buttons">
                <button
                  type="button"
                  className="button small"
                  data-testid="audit-newer"
                  disabled={audit.offset === 0 || audit.loading}
                  onClick={() => useSleep.getState().auditPage(audit.offset - AUDIT_PAGE)}
                >
                  {t('sleep.audit.newer')}
                </button>
                <button
                  type="button"
                  className="button small"
                  data-testid="audit-older"
                  disabled={to >= audit.total || audit.loading}
                  onClick={() => useSleep.getState().auditPage(audit.offset + AUDIT_PAGE)}
                >
                  {t('sleep.audit.older')}
                </button>
              </div>
            </div>
          </>
        )}
      </LoadPanel>
      {open ? <AuditDialog /> : null}
    </section>
  );
}
