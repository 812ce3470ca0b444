// Settings → Data → Erase everything: the danger zone at the bottom. It says what goes and what stays,
// and the red button only wakes once the word shown is typed (the guard against a slip: there is no
// undo for this one, the person asked for their data to be gone). Afterwards everything the window
// holds is read again; the panel says what went, and "Start again" opens onboarding.
import { useEffect, useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ERASE_WORDS, type EraseResult } from '../../../shared/api/app.js';
import { api } from '../../api/index.js';
import { ErrorNote } from '../../components/ErrorNote.js';
import { Icon } from '../../components/Icon.js';
import { useApp } from '../../stores/app.js';
import { useConversations } from '../../stores/conversations.js';
import { useMemories } from '../../stores/memories.js';
import { useProviders } from '../../stores/providers.js';

export function ErasePanel({ onErased }: { onErased?: () => void }) {
  const { t, i18n } = useTranslation();
  const titleId = useId();
  const inputId = useId();
  const [typed, setTyped] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const word = i18n.language === 'zh-CN' ? ERASE_WORDS['zh-CN'] : ERASE_WORDS.en;
  const [result, setResult] = useState<EraseResult | null>(null);
  const matches = typed.trim().toLowerCase() === word.toLowerCase();
  const done = useRef<HTMLElement>(null);
  // The panels above are read again and may shrink: keep the result in view.
  useEffect(() => {
    if (result) done.current?.scrollIntoView({ block: 'nearest' });
  }, [result]);

  const erase = async () => {
    if (!matches || busy) return;
    setBusy(true);
    setError(null);
    try {
      setResult(await api().call('app.eraseEverything', { confirm: typed }));
      onErased?.();
      // The lists the window holds came from the data that is gone: read them again now.
      await Promise.allSettled([
        useConversations.getState().refresh(),
        useMemories.getState().refreshList(),
        useMemories.getState().refreshPins(),
        useProviders.getState().refresh(),
      ]);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  // The fresh companion's settings: onboarding shows.
  const startAgain = () => void useApp.getState().reloadSettings();

  if (result) {
    return (
      <section ref={done} className="data-panel erase-panel" aria-labelledby={titleId} data-testid="erase-panel">
        <h3 className="subhead" id={titleId}>
          <Icon name="check" size={16} />
          {t('erase.doneTitle')}
        </h3>
        <div role="status" data-testid="erase-done">
          <p className="help">
            {t('erase.doneRemoved', {
              copies: t('erase.copies', { count: result.safetyCopies + result.previousData }),
              exports: t('erase.exports', { count: result.exports }),
              keys: result.keys ? t('erase.keys') : '',
            })}
          </p>
          {result.backupFolder ? <p className="help">{t('erase.doneFolder', { folder: result.backupFolder })}</p> : null}
          {result.left.length ? <p className="help">{t('erase.doneLeft', { names: result.left.join(', ') })}</p> : null}
        </div>
        <div>
          <button type="button" className="button primary" onClick={startAgain} data-testid="erase-start-again" autoFocus>
            {t('erase.startAgain')}
          </button>
        </div>
      </section>
    );
  }

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
