// "Remembered 3 things" above a reply that passive recall fed memories to; opens into the list.
import { useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { openMemory } from '../../app/actions.js';
import { Icon } from '../../components/Icon.js';
import { TypeBadge } from '../../components/MemoryBits.js';
import { useMemories } from '../../stores/memories.js';

function InjectedItem({ id }: { id: number }) {
  const { t } = useTranslation();
  const entry = useMemories((s) => s.cache[id]);
  const peek = useMemories((s) => s.peek[id]);
  const memory = entry?.memory ?? null;
  const type = memory?.type ?? peek?.type;
  const text = memory?.content ?? peek?.content ?? '';
  const gone = entry?.status === 'missing' || (memory !== null && memory.status !== 'active');
  const shown = gone && !memory ? t('citation.missing') : text || t('injected.unknown', { id });
  return (
    <li>
      <button
        type="button"
        className={gone ? 'injected-item muted' : 'injected-item'}
        data-testid="injected-item"
        data-id={id}
        aria-label={t('injected.open', { text: shown.slice(0, 80) })}
        disabled={entry?.status === 'missing'}
        onClick={() => openMemory(id)}
      >
        {type ? <TypeBadge type={type} /> : null}
        <span className="injected-text">{shown}</span>
      </button>
    </li>
  );
}

export function InjectedLine({ ids }: { ids: readonly number[] }) {
  const { t } = useTranslation();
  const [open, setOpen] = useState(false);
  const listId = useId();

  useEffect(() => {
    if (!open) return;
    for (const id of ids) void useMemories.getState().ensure(id);
  }, [open, ids]);

  return (
    <div className={open ? 'injected open' : 'injected'}>
      <button
        type="button"
        className="injected-line"
        data-testid="injected-line"
        aria-expanded={open}
        aria-controls={listId}
        title={t('injected.help')}
        onClick={() => setOpen((v) => !v)}
      >
        <Icon name="sparkle" size={13} />
        <span>{t('injected.line', { count: ids.length })}</span>
        <Icon name="arrowDown" size={12} className="injected-caret" />
      </button>
      {open ? (
        <ul className="injected-list" id={listId} aria-label={t('injected.listLabel')}>
          {ids.map((id) => (
            <InjectedItem key={id} id={id} />
          ))}
        </ul>
      ) : null}
    </div>
  );
}
