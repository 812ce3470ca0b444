// Settings → Memory → Sleep: whether the companion sleeps on its own, what a night may cost, the
// daytime nap (its switch and how quiet a conversation must be first), and — when an import brought
// history in — the offer to read it day by day (ImportedHistory.tsx).
import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import type { SleepSettings as SleepSettingsValue } from '../../../shared/api.js';
import { reportError, useApp } from '../../stores/app.js';
import { NumberSetting } from './MemoryAdvanced.js';
import { ImportedHistory } from './ImportedHistory.js';
import { SwitchField } from './SwitchField.js';

/** The same ranges the host's schema enforces (shared/api.ts sleepSettings). */
const BOUNDS = {
  maxCallsPerNight: { min: 1, max: 10_000, integer: true, step: 1 },
  maxTokensPerNight: { min: 1_000, max: 100_000_000, integer: true, step: 1_000 },
} as const;
const NAP_QUIET_BOUNDS = { min: 1, max: 24 * 60, integer: true, step: 1 } as const;

export function SleepSettings() {
  const { t } = useTranslation();
  const uid = useId();
  const sleep = useApp((s) => s.settings?.sleep);
  const update = useApp((s) => s.updateSettings);
  if (!sleep) return null;

  const save = (patch: Partial<SleepSettingsValue>) =>
    update({ sleep: patch }).then(
      () => {},
      (err: unknown) => {
        reportError(err);
        throw err;
      },
    );

  return (
    <div className="sleep-settings" data-testid="sleep-settings">
      <h3 className="subhead">{t('memory.sleepSubhead')}</h3>
      <SwitchField
        id={`${uid}-auto`}
        testId="sleep-auto"
        checked={sleep.auto}
        onChange={(auto) => void save({ auto }).catch(() => {})}
        label={t('memory.sleepAuto')}
        help={t('memory.sleepAutoHelp')}
      />
      <p className="help">{t('memory.budgetIntro')}</p>
      {(Object.keys(BOUNDS) as (keyof typeof BOUNDS)[]).map((name) => (
        <NumberSetting
          key={name}
          i18nKey={`memory.sleepFields.${name}`}
          testId={`sleep-setting-${name}`}
          bounds={BOUNDS[name]}
          value={sleep[name]}
          save={(n) => save({ [name]: n })}
        />
      ))}
      <ImportedHistory />
      <h3 className="subhead">{t('memory.napSubhead')}</h3>
      <SwitchField
        id={`${uid}-nap`}
        testId="sleep-nap"
        checked={sleep.nap}
        onChange={(nap) => void save({ nap }).catch(() => {})}
        label={t('memory.napSwitch')}
        help={t('memory.napHelp')}
      />
      {sleep.nap && (
        <NumberSetting
          i18nKey="memory.sleepFields.napQuietMinutes"
          testId="sleep-setting-napQuietMinutes"
          bounds={NAP_QUIET_BOUNDS}
          value={sleep.napQuietMinutes}
          save={(n) => save({ napQuietMinutes: n })}
        />
      )}
    </div>
  );
}
