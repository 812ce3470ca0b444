import { useTranslation } from 'react-i18next';
import { Icon, type IconName } from '../../components/Icon.js';
import { SETTINGS_SECTIONS, useApp, type SettingsSection } from '../../stores/app.js';
import { LanguageSection, ThemeSection } from './AppearanceSections.js';
import { CompanionSection } from './CompanionSection.js';
import { DataSection } from './DataSection.js';
import { DevicesSection } from './DevicesSection.js';
import { MemorySection } from './MemorySection.js';
import { ModelsSection } from './ModelsSection.js';

const icons: Record<SettingsSection, IconName> = {
  models: 'server',
  companion: 'person',
  memory: 'brain',
  data: 'folder',
  devices: 'phone',
  language: 'globe',
  theme: 'sun',
};

export function SettingsView() {
  const { t } = useTranslation();
  const section = useApp((s) => s.settingsSection);
  const setView = useApp((s) => s.setView);
  return (
    <div className="settings">
      <nav className="settings-nav" aria-label={t('settings.sectionsLabel')}>
        <h1 className="pane-title">{t('settings.title')}</h1>
        <ul>
          {SETTINGS_SECTIONS.map((s) => (
            <li key={s}>
              <button
                type="button"
                className="settings-nav-item"
                data-testid={`settings-${s}`}
                aria-current={section === s ? 'page' : undefined}
                onClick={() => setView('settings', s)}
              >
                <Icon name={icons[s]} size={18} />
                {t(`settings.sections.${s}`)}
              </button>
            </li>
          ))}
        </ul>
      </nav>
      <div className="settings-content">
        <div className="settings-content-inner">
          <h2 className="section-title">{t(`settings.sections.${section}`)}</h2>
          {section === 'models' ? (
            <ModelsSection />
          ) : section === 'companion' ? (
            <CompanionSection />
          ) : section === 'memory' ? (
            <MemorySection />
          ) : section === 'data' ? (
            <DataSection />
          ) : section === 'devices' ? (
            <DevicesSection />
          ) : section === 'language' ? (
            <LanguageSection />
          ) : (
            <ThemeSection />
          )}
        </div>
      </div>
    </div>
  );
}
