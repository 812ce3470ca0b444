import { useTranslation } from 'react-i18next';
import type { Language, Theme } from '../../../shared/api.js';
import { languageFromLocale } from '../../i18n/resolve.js';
import { reportError, useApp } from '../../stores/app.js';

const LANGUAGES: Language[] = ['system', 'en', 'zh-CN'];
const THEMES: Theme[] = ['system', 'light', 'dark'];

export function LanguageSection() {
  const { t } = useTranslation();
  const value = useApp((s) => s.settings?.language ?? 'system');
  const systemLang = languageFromLocale(navigator.language);
  return (
    <div className="settings-section" data-testid="settings-section-language">
      <fieldset className="choice-group">
        <legend className="visually-hidden">{t('language.label')}</legend>
        {LANGUAGES.map((lang) => (
          <label key={lang} className="choice" data-testid={`language-${lang}`}>
            <input
              type="radio"
              name="language"
              value={lang}
              checked={value === lang}
              onChange={() => void useApp.getState().updateSettings({ language: lang }).catch(reportError)}
            />
            <span lang={lang === 'system' ? undefined : lang}>
              {lang === 'system' ? t('language.system', { lang: t(`language.${systemLang}`) }) : t(`language.${lang}`)}
            </span>
          </label>
        ))}
      </fieldset>
    </div>
  );
}

export function ThemeSection() {
  const { t } = useTranslation();
  const value = useApp((s) => s.settings?.theme ?? 'system');
  return (
    <div className="settings-section" data-testid="settings-section-theme">
      <fieldset className="theme-choices">
        <legend className="visually-hidden">{t('theme.label')}</legend>
        {THEMES.map((theme) => (
          <label key={theme} className="theme-choice" data-testid={`theme-${theme}`}>
            <input
              type="radio"
              name="theme"
              value={theme}
              checked={value === theme}
              onChange={() => void useApp.getState().updateSettings({ theme }).catch(reportError)}
            />
            <span className={`theme-preview theme-preview-${theme}`} aria-hidden="true">
              <span className="tp-rail" />
              <span className="tp-body">
                <span className="tp-line" />
                <span className="tp-bubble" />
                <span className="tp-line short" />
              </span>
            </span>
            <span className="theme-name">{t(`theme.${theme}`)}</span>
          </label>
        ))}
      </fieldset>
    </div>
  );
}
