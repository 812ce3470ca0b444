import i18next from 'i18next';
import { initReactI18next } from 'react-i18next';
import type { Language } from '../../shared/api.js';
import en from './en.js';
import zhCN from './zh-CN.js';
import { resolveLanguage, type UiLanguage } from './resolve.js';

export { resolveLanguage, type UiLanguage } from './resolve.js';

export const i18n = i18next.createInstance();

function applyToDocument(lang: UiLanguage) {
  // lang drives the CJK font choice in CSS and how screen readers pronounce the text.
  document.documentElement.lang = lang;
}

export async function initI18n(): Promise<void> {
  const lang = resolveLanguage('system', navigator.language);
  await i18n.use(initReactI18next).init({
    resources: { en: { translation: en }, 'zh-CN': { translation: zhCN } },
    lng: lang,
    fallbackLng: 'en',
    // React escapes text itself.
    interpolation: { escapeValue: false },
    returnNull: false,
  });
  applyToDocument(lang);
}

export async function setLanguage(setting: Language): Promise<void> {
  const lang = resolveLanguage(setting, navigator.language);
  if (i18n.language !== lang) await i18n.changeLanguage(lang);
  applyToDocument(lang);
}

/** The locale for Intl formatting: the UI language, refined by the system's region when it agrees. */
export function currentLocale(): string {
  const ui = (i18n.language as UiLanguage | undefined) ?? 'en';
  const sys = navigator.language;
  if (ui === 'en' && sys.toLowerCase().startsWith('en')) return sys;
  return ui;
}
