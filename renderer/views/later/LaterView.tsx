import { useTranslation } from 'react-i18next';
import { Illustration } from '../../components/Illustration.js';
import { currentLocale } from '../../i18n/index.js';
import { formatWallClock } from '../../lib/time.js';
import { useApp, type View } from '../../stores/app.js';

type LaterViewName = Exclude<View, 'chat' | 'settings'>;

/**
 * The views whose content comes from the sleep cycle and memory work that is still being built:
 * an honest page saying what will appear here and when, never sample data.
 */
export function LaterView({ view }: { view: LaterViewName }) {
  const { t } = useTranslation();
  const sleepTime = useApp((s) => s.settings?.sleepTime ?? '02:00');
  const setView = useApp((s) => s.setView);
  const time = formatWallClock(sleepTime, currentLocale());
  return (
    <div className="later" data-testid={`view-${view}`}>
      <div className="later-inner">
        <Illustration view={view} />
        <h1 className="later-title">{t(`later.${view}.title`, { time })}</h1>
        <p className="later-body">{t(`later.${view}.body`, { time })}</p>
        <div className="later-actions">
          <button type="button" className="button primary" onClick={() => setView('chat')}>
            {t('common.goToChat')}
          </button>
          <button type="button" className="button ghost" onClick={() => setView('settings', 'memory')}>
            {t('later.sleepsAt', { time })}
          </button>
        </div>
      </div>
    </div>
  );
}
