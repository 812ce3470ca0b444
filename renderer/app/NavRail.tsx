import { useTranslation } from 'react-i18next';
import { Icon, type IconName } from '../components/Icon.js';
import { modKeyLabel } from '../lib/platform.js';
import { useApp, VIEWS, type View } from '../stores/app.js';

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

export function NavRail() {
  const { t } = useTranslation();
  const view = useApp((s) => s.view);
  const setView = useApp((s) => s.setView);
  const mod = modKeyLabel();

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
