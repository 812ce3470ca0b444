import type { Language } from '../../shared/api.js';

export type UiLanguage = 'en' | 'zh-CN';
export const UI_LANGUAGES: UiLanguage[] = ['en', 'zh-CN'];

/** Any Chinese locale gets Simplified Chinese (the only Chinese we have); everything else English. */
export function languageFromLocale(locale: string | undefined): UiLanguage {
  return locale && /^zh\b/i.test(locale) ? 'zh-CN' : 'en';
}

export function resolveLanguage(setting: Language, navigatorLanguage: string | undefined): UiLanguage {
  return setting === 'system' ? languageFromLocale(navigatorLanguage) : setting;
}
