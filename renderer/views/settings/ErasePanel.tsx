// Settings → Data → Erase everything: the danger zone at the bottom. It says what goes and what stays,
// and the red button only wakes once the word shown is typed (the guard against a slip: there is no
// undo for this one, the person asked for their data to be gone). Afterwards everything the window
// holds is read again from the fresh companion, so onboarding shows.
import { useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ERASE_WORDS, type EraseResult } from '../../../shared/api/app.js';
import { api } from '../../api/index.js';
import { ErrorNote } from '../../components/ErrorNote.js';
import { Icon } from '../../components/Icon.js';
import { useApp } from '../../stores/app.js';
import { useConversations } from '../../stores/conversations.js';
import { useMemories } from '../../stores/memories.js';

export function ErasePanel() {
  const { t, i18n } = useTranslation();
  const titleId = useId();
  const inputId = useId();
  const [typed, setTyped] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const word = i18n.language === 'zh-CN' ? ERASE_WORDS['zh-CN'] : ERASE_WORDS.en;
  const matches = typed.trim().toLowerCase() === word.toLowerCase();

  const erase = async () => {
    if (!matches || busy) return;
    setBusy(true);
    setError(null);
    try {
      const result: EraseResult = await api().call('app.eraseEverything', { confirm: typed });
      useApp.getState().toast(
        {
          tone: 'info',
          text: t(result.backupFolder ? 'erase.doneWithFolder' : 'erase.done', { folder: result.backupFolder ?? '' }),
        },
        12_000,
      );
      // Everything the window shows came from the data that is gone: read it all again (onboarding follows).
      await Promise.allSettled([useConversations.getState().refresh(), useMemories.getState().refreshList(), useMemories.getState().refreshPins()]);
      await useApp.getState().reloadSettings();
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  return (
    <section className="data-panel erase-panel" aria-labelledby={titleId} data-testid="erase-panel">
      <h3 className="subhead" id={titleId}>
        <Icon name="alert" size={16} />
        {t('erase.title')}
      </h3>
      <p className="help">{t('erase.intro')}</p>
      <ul className="erase-list">
        <li>{t('erase.removes')}</li>
        <li>{t('erase.keeps')}</li>
      </ul>
      <form
        className="erase-form"
        onSubmit={(e) => {
          e.preventDefault();
          void erase();
        }}
      >
        <label htmlFor={inputId}>{t('erase.typeLabel', { word })}</label>
        <div className="erase-row">
          <input
            id={inputId}
            className="input"
            value={typed}
            onChange={(e) => setTyped(e.target.value)}
            placeholder={word}
            autoComplete="off"
            spellCheck={false}
            disabled={busy}
            data-testid="erase-input"
          />
          <button type="submit" className="button danger" disabled={!matches || busy} data-testid="erase-button">
            <Icon name="trash" size={16} />
            {busy ? t('erase.erasing') : t('erase.button')}
          </button>
        </div>
      </form>
      {error ? <ErrorNote error={error} detailVisible /> : null}
    </section>
  );
}
