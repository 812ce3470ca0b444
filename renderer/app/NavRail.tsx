import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Icon, type IconName } from '../components/Icon.js';
import { modKeyLabel } from '../lib/platform.js';
import { useApp, VIEWS, type View } from '../stores/app.js';
import { useIsPhone } from './phone.js';

const icons: Record<View, IconName> = {
  chat: 'chat',
  diary: 'diary',
  dreams: 'dreams',
  graph: 'graph',
  pins: 'pins',
  memories: 'memories',
  sleep: 'sleep',
  settings: 'settings',
};

/** On a phone: four tabs at the bottom, as companion apps have them, and the rest behind "More". */
const PHONE_TABS: readonly View[] = ['chat', 'diary', 'memories', 'pins'];
const PHONE_MORE: readonly View[] = VIEWS.filter((v) => !PHONE_TABS.includes(v));

export function NavRail() {
  const { t } = useTranslation();
  const view = useApp((s) => s.view);
  const setView = useApp((s) => s.setView);
  const mod = modKeyLabel();
  const phone = useIsPhone();

  if (phone) return <TabBar view={view} setView={setView} />;

  const item = (v: View, n: number) => {
    const label = t(`nav.${v}`);
    const shortcut = t('nav.shortcut', { key: mod, n });
    return (
      <li key={v}>
        <button
          type="button"
          className="nav-item"
          data-testid={`nav-${v}`}
          aria-current={view === v ? 'page' : undefined}
          aria-keyshortcuts={`${mod === '⌘' ? 'Meta' : 'Control'}+${n}`}
          title={`${label} (${shortcut})`}
          onClick={() => setView(v)}
        >
          <Icon name={icons[v]} size={22} />
          <span className="nav-label">{label}</span>
        </button>
      </li>
    );
  };

  return (
    <nav className="nav-rail" aria-label={t('nav.label')}>
      <div className="nav-brand" aria-hidden="true">
        <span className="nav-brand-mark" />
      </div>
      <ul className="nav-list">{VIEWS.slice(0, 7).map((v, i) => item(v, i + 1))}</ul>
      <ul className="nav-list nav-list-bottom">{item('settings', 8)}</ul>
    </nav>
  );
}

function TabBar({ view, setView }: { view: View; setView: (v: View) => void }) {
  const { t } = useTranslation();
  const [moreOpen, setMoreOpen] = useState(false);
  const inMore = PHONE_MORE.includes(view);

  useEffect(() => {
    if (!moreOpen) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') setMoreOpen(false);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [moreOpen]);

  const go = (v: View) => {
    setMoreOpen(false);
    setView(v);
  };

  const tab = (v: View) => (
    <li key={v}>
      <button type="button" className="tab-item" data-testid={`nav-${v}`} aria-current={view === v ? 'page' : undefined} onClick={() => go(v)}>
        <Icon name={icons[v]} size={22} />
        <span className="tab-label">{t(`nav.${v}`)}</span>
      </button>
    </li>
  );

  return (
    <nav className="tab-bar" aria-label={t('nav.label')} data-more={moreOpen ? 'open' : undefined}>
      {moreOpen ? <div className="tab-more-backdrop" aria-hidden="true" onClick={() => setMoreOpen(false)} /> : null}
      {moreOpen ? (
        <ul className="tab-more-sheet" id="nav-more-sheet" aria-label={t('nav.moreLabel')} data-testid="nav-more-sheet">
          {PHONE_MORE.map((v) => (
            <li key={v}>
              <button type="button" className="tab-more-item" data-testid={`nav-${v}`} aria-current={view === v ? 'page' : undefined} onClick={() => go(v)}>
                <Icon name={icons[v]} size={22} />
                <span>{t(`nav.${v}`)}</span>
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      <ul className="tab-list">
        {PHONE_TABS.map(tab)}
        <li>
          <button
            type="button"
            className={inMore ? 'tab-item tab-more current' : 'tab-item tab-more'}
            data-testid="nav-more"
            aria-expanded={moreOpen}
            aria-controls={moreOpen ? 'nav-more-sheet' : undefined}
            onClick={() => setMoreOpen((o) => !o)}
          >
            <Icon name="more" size={22} />
            <span className="tab-label">{inMore ? t(`nav.${view}`) : t('nav.more')}</span>
          </button>
        </li>
      </ul>
    </nav>
  );
}
