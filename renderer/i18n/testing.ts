// For tests of pure wording functions: the app's own resources in both languages, without React or a
// document, and a translate function fixed to one of them.
import i18next from 'i18next';
import en from './en.js';
import zhCN from './zh-CN.js';

export type Translate = (key: string, values?: Record<string, string | number>) => string;

/** Loads both languages once; the returned function gives `t` fixed to a language. */
export async function translators(): Promise<(lng: string) => Translate> {
  const i18n = i18next.createInstance();
  await i18n.init({
    resources: { en: { translation: en }, 'zh-CN': { translation: zhCN } },
    lng: 'en',
    fallbackLng: 'en',
    interpolation: { escapeValue: false },
  });
  return (lng) => i18n.getFixedT(lng) as Translate;
}
