import { useEffect } from 'react';
import { resolveLanguage, setLanguage } from '../i18n/index.js';
import { useApp } from '../stores/app.js';
import { useMediaQuery } from './hooks.js';

/** Keeps <html data-theme> and the UI language in step with the settings (and the system). */
export function useAppearance(): void {
  const theme = useApp((s) => s.settings?.theme ?? 'system');
  const language = useApp((s) => s.settings?.language ?? 'system');
  const systemDark = useMediaQuery('(prefers-color-scheme: dark)');
  const resolved = theme === 'system' ? (systemDark ? 'dark' : 'light') : theme;

  useEffect(() => {
    document.documentElement.dataset.theme = resolved;
    // The phone's status bar in the page's colour (--bg of the theme in styles/base.css), for the
    // theme chosen in Settings rather than the system's.
    const bar = resolved === 'dark' ? '#1a1917' : '#f7f5f1';
    for (const meta of document.querySelectorAll<HTMLMetaElement>('meta[name="theme-color"]')) meta.content = bar;
  }, [resolved]);

  useEffect(() => {
    void setLanguage(language);
  }, [language]);

  useEffect(() => {
    useApp.getState().setAppearance(resolved, resolveLanguage(language, navigator.language));
  }, [resolved, language]);
}
