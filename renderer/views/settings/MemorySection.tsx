import { useId, useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { currentLocale } from '../../i18n/index.js';
import { formatWallClock } from '../../lib/time.js';
import { reportError, useApp } from '../../stores/app.js';
import { MemoryAdvanced } from './MemoryAdvanced.js';
import { SleepSettings } from './SleepSettings.js';
import { SwitchField } from './SwitchField.js';

function zoneList(current: string): string[] {
  let zones: string[] = [];
  try {
    zones = Intl.supportedValuesOf('timeZone');
  } catch {
    zones = [];
  }
  const system = Intl.DateTimeFormat().resolvedOptions().timeZone;
  for (const z of [current, system, 'UTC']) if (z && !zones.includes(z)) zones = [z, ...zones];
  return zones;
}

function offsetOf(zone: string): string {
  try {
    return (
      new Intl.DateTimeFormat('en', { timeZone: zone, timeZoneName: 'shortOffset' }).formatToParts(new Date()).find((p) => p.type === 'timeZoneName')?.value ??
      ''
    );
  } catch {
    return '';
  }
}

/** The example needs a time that shows the point: just before a sleep after midnight, or just after an evening one. */
function sleepDayText(t: (key: string, options?: Record<string, unknown>) => string, sleepTime: string): string {
  const [h = 2, m = 0] = sleepTime.split(':').map(Number);
  const minutes = h * 60 + m;
  const afterMidnight = minutes < 12 * 60;
  const example = (minutes + (afterMidnight ? -60 : 60) + 24 * 60) % (24 * 60);
  const hhmm = `${String(Math.floor(example / 60)).padStart(2, '0')}:${String(example % 60).padStart(2, '0')}`;
  const locale = currentLocale();
  return t(afterMidnight ? 'memory.sleepDayBody' : 'memory.sleepDayBodyEarly', {
    time: formatWallClock(sleepTime, locale),
    example: formatWallClock(hhmm, locale),
  });
}

export function MemorySection() {
  const { t } = useTranslation();
  const settings = useApp((s) => s.settings);
  const update = useApp((s) => s.updateSettings);
  const uid = useId();
  const system = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const current = settings?.timeZone || system;
  const zones = useMemo(() => zoneList(current).map((z) => ({ zone: z, offset: offsetOf(z) })), [current]);
  if (!settings) return null;

  const save = (patch: Parameters<typeof update>[0]) => void update(patch).catch(reportError);

  return (
    <div className="settings-section" data-testid="settings-section-memory">
      <SwitchField
        id={`${uid}-recall`}
        testId="passive-recall"
        checked={settings.passiveRecall}
        onChange={(passiveRecall) => save({ passiveRecall })}
        label={t('memory.passiveRecall')}
        help={t('memory.passiveRecallHelp')}
      />

      <MemoryAdvanced />

      <div className="field-row">
        <div className="field">
          <label htmlFor={`${uid}-sleep`}>{t('memory.sleepTime')}</label>
          <input
            id={`${uid}-sleep`}
            type="time"
            step={60}
            className="input narrow"
            data-testid="sleep-time"
            value={settings.sleepTime}
            aria-describedby={`${uid}-sleep-help`}
            onChange={(e) => {
              if (/^([01]\d|2[0-3]):[0-5]\d$/.test(e.target.value)) save({ sleepTime: e.target.value });
            }}
          />
          <p className="help" id={`${uid}-sleep-help`}>
            {t('memory.sleepTimeHelp')}
          </p>
        </div>

        <div className="field grow">
          <label htmlFor={`${uid}-tz`}>{t('memory.timeZone')}</label>
          <select id={`${uid}-tz`} className="input" data-testid="time-zone" value={current} onChange={(e) => save({ timeZone: e.target.value })}>
            {zones.map(({ zone, offset }) => (
              <option key={zone} value={zone}>
                {zone === system ? t('memory.timeZoneCurrent', { zone: zone.replace(/_/g, ' ') }) : zone.replace(/_/g, ' ')}
                {offset ? ` (${offset})` : ''}
              </option>
            ))}
          </select>
        </div>
      </div>

      <aside className="explainer">
        <h3 className="subhead">{t('memory.sleepDayTitle')}</h3>
        <p>{sleepDayText(t, settings.sleepTime)}</p>
      </aside>

      <SleepSettings />
    </div>
  );
}
