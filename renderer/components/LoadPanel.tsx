// What a panel shows while its data is not there: "Loading…" until the first answer, or what went
// wrong with a Retry. Once there is something to show, a later failure is not put in front of it.
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { ErrorNote } from './ErrorNote.js';

export function Loading({ className = 'help' }: { className?: string }) {
  const { t } = useTranslation();
  return (
    <p className={className} aria-busy="true">
      {t('common.loading')}
    </p>
  );
}

/** An error in words with a Retry button. */
export function RetryNote({ error, onRetry, compact = false }: { error: unknown; onRetry: () => void; compact?: boolean }) {
  const { t } = useTranslation();
  return (
    <ErrorNote error={error} compact={compact}>
      <button type="button" className="button small" onClick={onRetry}>
        {t('common.retry')}
      </button>
    </ErrorNote>
  );
}

/**
 * The error (with Retry) when there is one, else "Loading…" until `loaded`, else the content. Pass
 * the error only while there is nothing to show instead (`items.length ? null : error`).
 */
export function LoadPanel({
  error,
  loaded,
  onRetry,
  compact = false,
  loadingClassName,
  children,
}: {
  error: unknown;
  loaded: boolean;
  onRetry: () => void;
  compact?: boolean;
  loadingClassName?: string;
  children?: ReactNode;
}) {
  if (error) return <RetryNote error={error} onRetry={onRetry} compact={compact} />;
  if (!loaded) return <Loading className={loadingClassName} />;
  return <>{children}</>;
}
