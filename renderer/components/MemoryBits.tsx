// Small pieces every memory surface shares: the kind of memory, and how often it has been used.
import { useTranslation } from 'react-i18next';
import type { Memory, MemoryStatus, MemoryType } from '../../shared/api.js';

export function TypeBadge({ type }: { type: MemoryType | string }) {
  const { t } = useTranslation();
  const known = t(`memories.types.${type}`, { defaultValue: '' });
  return (
    <span className="type-badge" data-type={type} title={t(`memories.typeHelp.${type}`, { defaultValue: '' }) || undefined}>
      {known || type}
    </span>
  );
}

export function StatusBadge({ status }: { status: MemoryStatus }) {
  const { t } = useTranslation();
  if (status === 'active') return null;
  return (
    <span className={`status-badge status-${status}`} title={t(`memories.statusHelp.${status}`)}>
      {t(`memories.statuses.${status}`)}
    </span>
  );
}

/** "cited 3 times · shown to me 5 times" */
export function MemoryCounts({ memory, className = 'memory-counts' }: { memory: Pick<Memory, 'referenceCount' | 'injectedCount'>; className?: string }) {
  const { t } = useTranslation();
  return (
    <span className={className} title={t('memories.countsHelp')}>
      {t('memories.cited', { count: memory.referenceCount })} · {t('memories.shown', { count: memory.injectedCount })}
    </span>
  );
}
