// Settings → Data → Trash: deleted conversations wait here for 30 days, each with the day it is
// removed for good and a Restore that brings it back with everything deleting it took along.
import { useCallback, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { TrashedConversation } from '../../../shared/api.js';
import { api } from '../../api/index.js';
import { LoadPanel } from '../../components/LoadPanel.js';
import { currentLocale } from '../../i18n/index.js';
import { reportError, useApp } from '../../stores/app.js';
import { useConversations } from '../../stores/conversations.js';

export function TrashPanel() {
  const { t } = useTranslation();
  const [items, setItems] = useState<TrashedConversation[]>([]);
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const day = new Intl.DateTimeFormat(currentLocale(), { month: 'long', day: 'numeric', year: 'numeric' });

  const load = useCallback(async () => {
    try {
      setItems(await api().call('conversations.trash', {}));
      setError(null);
    } catch (err) {
      setError(err);
    } finally {
      setLoaded(true);
    }
  }, []);

  useEffect(() => {
    void load();
  }, [load]);

  const restore = async (c: TrashedConversation) => {
    setBusy(c.id);
    try {
      await useConversations.getState().restore(c.id);
      setItems((list) => list.filter((x) => x.id !== c.id));
      useApp.getState().toast({ tone: 'info', text: t('trash.restoredToast', { title: c.title.trim() || t('conversations.untitled') }) });
    } catch (err) {
      reportError(err);
    } finally {
      setBusy(null);
    }
  };

  return (
    <section className="data-panel trash-panel" aria-labelledby="trash-title" data-testid="trash-panel">
      <h3 className="subhead" id="trash-title">
        {t('trash.title')}
      </h3>
      <p className="help">{t('trash.help')}</p>
      <LoadPanel error={items.length ? null : error} loaded={loaded} onRetry={() => void load()}>
        {items.length === 0 ? (
          <p className="help" data-testid="trash-empty">
            {t('trash.empty')}
          </p>
        ) : (
          <ul className="trash-list">
            {items.map((c) => (
              <li key={c.id} className="trash-item" data-testid="trash-item" data-id={c.id}>
                <div className="trash-text">
                  <span className="trash-title">{c.title.trim() || t('conversations.untitled')}</span>
                  <span className="trash-when">
                    {t('trash.purgeOn', { date: day.format(new Date(c.purgeAt)) })} · {t('conversations.messages', { count: c.messageCount })}
                  </span>
                </div>
                <button
                  type="button"
                  className="button small"
                  data-testid="trash-restore"
                  disabled={busy === c.id}
                  aria-label={t('trash.restoreLabel', { title: c.title.trim() || t('conversations.untitled') })}
                  onClick={() => void restore(c)}
                >
                  {t('trash.restore')}
                </button>
              </li>
            ))}
          </ul>
        )}
      </LoadPanel>
    </section>
  );
}
