// Settings → Memory → Advanced: how passive recall picks memories, and how much is always carried.
import { useEffect, useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { MemorySettings } from '../../../shared/api.js';
import { useFleeting } from '../../app/hooks.js';
import { Icon } from '../../components/Icon.js';
import { currentLocale } from '../../i18n/index.js';
import { formatCount, parseBounded, type Bounds } from '../../lib/memories.js';
import { reportError, useApp } from '../../stores/app.js';

// vectorWeight is the Models card's switch (search by meaning), not a number typed here.
type NumberKey = Exclude<keyof MemorySettings, 'passiveExcludeResident' | 'vectorWeight'>;

/** The same ranges the host's schema enforces (shared/api.ts memorySettings). */
export const MEMORY_SETTING_BOUNDS: Record<NumberKey, Bounds & { step: number }> = {
  passiveLimit: { min: 1, max: 20, integer: true, step: 1 },
  passiveMinScore: { min: 0, max: 1, step: 0.05 },
  passiveMinRelativeScore: { min: 0, max: 1, step: 0.05 },
  passiveMaxChars: { min: 200, max: 20_000, integer: true, step: 100 },
  residentTopN: { min: 0, max: 100, integer: true, step: 1 },
};

/** One bounded number setting: typed, checked against the host's range, saved on blur or Enter. */
export function NumberSetting({
  i18nKey,
  testId,
  bounds,
  value,
  save,
}: {
  /** Where its words live: `${i18nKey}.label` and `${i18nKey}.help`. */
  i18nKey: string;
  testId: string;
  bounds: Bounds & { step: number };
  value: number;
  save: (n: number) => Promise<void>;
}) {
  const { t } = useTranslation();
  const uid = useId();
  const [text, setText] = useState(String(value));
  const [invalid, setInvalid] = useState(false);
  const [saved, setSaved] = useFleeting(false, 1600);
  const input = useRef<HTMLInputElement>(null);

  // A change from elsewhere shows up unless the person is typing here.
  useEffect(() => {
    if (document.activeElement !== input.current) {
      setText(String(value));
      setInvalid(false);
    }
  }, [value]);

  const commit = () => {
    const n = parseBounded(text, bounds);
    if (n === null) {
      setInvalid(true);
      return;
    }
    setInvalid(false);
    setText(String(n));
    if (n === value) return;
    void save(n).then(
      () => setSaved(true),
      () => {},
    );
  };

  const locale = currentLocale();
  return (
    <div className="adv-row">
      <div className="adv-text">
        <label htmlFor={`${uid}-in`}>{t(`${i18nKey}.label`)}</label>
        <p className="help" id={`${uid}-help`}>
          {t(`${i18nKey}.help`)}
        </p>
        {invalid ? (
          <p className="help danger-text" id={`${uid}-err`} role="alert">
            {t('memory.rangeError', { min: formatCount(bounds.min, locale), max: formatCount(bounds.max, locale) })}
          </p>
        ) : null}
      </div>
      <div className="adv-control">
        <input
          ref={input}
          id={`${uid}-in`}
          className="input adv-input"
          type="number"
          inputMode={bounds.integer ? 'numeric' : 'decimal'}
          min={bounds.min}
          max={bounds.max}
          step={bounds.step}
          data-testid={testId}
          value={text}
          aria-invalid={invalid || undefined}
          aria-describedby={`${uid}-help${invalid ? ` ${uid}-err` : ''}`}
          onChange={(e) => {
            setText(e.target.value);
            if (invalid && parseBounded(e.target.value, bounds) !== null) setInvalid(false);
          }}
          onBlur={commit}
          onKeyDown={(e) => {
            if (e.key === 'Enter') {
              e.preventDefault();
              commit();
            }
          }}
        />
        <span className="adv-range">
          {saved ? (
            <span className="adv-saved" role="status">
              <Icon name="check" size={14} />
              {t('common.saved')}
            </span>
          ) : (
            `${formatCount(bounds.min, locale)}–${formatCount(bounds.max, locale)}`
          )}
        </span>
      </div>
    </div>
  );
}

function MemoryNumber({ name, value, save }: { name: NumberKey; value: number; save: (patch: Partial<MemorySettings>) => Promise<void> }) {
  return (
    <NumberSetting
      i18nKey={`memory.fields.${name}`}
      testId={`memory-setting-${name}`}
      bounds={MEMORY_SETTING_BOUNDS[name]}
      value={value}
      save={(n) => save({ [name]: n })}
    />
  );
}

export function MemoryAdvanced() {
  const { t } = useTranslation();
  const uid = useId();
  const memory = useApp((s) => s.settings?.memory);
  const recallOn = useApp((s) => s.settings?.passiveRecall ?? true);
  const update = useApp((s) => s.updateSettings);
  if (!memory) return null;

  const save = (patch: Partial<MemorySettings>) =>
    update({ memory: patch }).then(
      () => {},
      (err: unknown) => {
        reportError(err);
        throw err;
      },
    );

  return (
    <details className="advanced" data-testid="memory-advanced">
      <summary>
        <Icon name="arrowDown" size={14} className="advanced-caret" />
        {t('memory.advanced')}
      </summary>
      <div className="advanced-body">
        <p className="help adv-intro">{t('memory.advancedIntro')}</p>
        {!recallOn ? <p className="adv-note">{t('memory.recallOffNote')}</p> : null}
        <MemoryNumber name="passiveLimit" value={memory.passiveLimit} save={save} />
        <MemoryNumber name="passiveMinScore" value={memory.passiveMinScore} save={save} />
        <MemoryNumber name="passiveMinRelativeScore" value={memory.passiveMinRelativeScore} save={save} />
        <MemoryNumber name="passiveMaxChars" value={memory.passiveMaxChars} save={save} />
        <div className="adv-row">
          <div className="adv-text">
            <label htmlFor={`${uid}-exclude`}>{t('memory.fields.passiveExcludeResident.label')}</label>
            <p className="help" id={`${uid}-exclude-help`}>
              {t('memory.fields.passiveExcludeResident.help')}
            </p>
          </div>
          <div className="adv-control">
            <input
              id={`${uid}-exclude`}
              type="checkbox"
              role="switch"
              className="switch"
              data-testid="memory-setting-passiveExcludeResident"
              checked={memory.passiveExcludeResident}
              aria-describedby={`${uid}-exclude-help`}
              onChange={(e) => void save({ passiveExcludeResident: e.target.checked }).catch(() => {})}
            />
          </div>
        </div>
        <h4 className="adv-subhead">{t('memory.residentSubhead')}</h4>
        <MemoryNumber name="residentTopN" value={memory.residentTopN} save={save} />
      </div>
    </details>
  );
}
