import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { errorWords } from '../i18n/errors.js';
import { Icon } from './Icon.js';

/** An error in words: what happened, what to do, and — small — what the server actually said. */
export function ErrorNote({
  error,
  children,
  compact = false,
  detailVisible = false,
}: {
  error: unknown;
  children?: ReactNode;
  compact?: boolean;
  /** Where the server's own words are the useful part (a connection test), show them outright. */
  detailVisible?: boolean;
}) {
  const { t } = useTranslation();
  const w = errorWords(t, error);
  return (
    <div className={compact ? 'error-note compact' : 'error-note'} role="alert" data-error-code={w.code}>
      <Icon name="alert" size={18} className="error-note-icon" />
      <div className="error-note-body">
        <p className="error-note-what">{w.what}</p>
        <p className="error-note-todo">{w.todo}</p>
        {w.detail && w.detail !== w.what && detailVisible ? (
          <p className="error-note-detail">{t('models.serverSaid', { message: w.detail })}</p>
        ) : w.detail && w.detail !== w.what ? (
          <details className="error-note-detail">
            <summary>{t('common.details')}</summary>
            <code>{w.detail}</code>
          </details>
        ) : null}
        {children ? <div className="error-note-actions">{children}</div> : null}
      </div>
    </div>
  );
}
