// The app store's settings: an answer that arrives after a newer settings.changed event does not put
// the older settings back (a language switched from elsewhere stayed English in the window).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Settings } from '../../shared/api.js';
import { setClient } from '../api/index.js';
import { scriptedClient, type ScriptedClient } from '../api/scripted-client.js';
import { useApp } from './app.js';

let handlers: ScriptedClient['handlers'];

const settings = (language: string, host: string) => ({ language, models: { host, embedding: null } }) as unknown as Settings;

beforeEach(() => {
  const scripted = scriptedClient();
  handlers = scripted.handlers;
  setClient(scripted.client);
  useApp.setState({ settings: settings('en', 'https://huggingface.co') });
});
afterEach(() => setClient(null));

describe('settings in the app store', () => {
  it('keeps a newer settings.changed over the late answer of an earlier update', async () => {
    let answer!: (s: Settings) => void;
    handlers['settings.update'] = () => new Promise<Settings>((resolve) => (answer = resolve));
    const update = useApp.getState().updateSettings({ models: { host: 'https://huggingface.co' } });
    // Meanwhile another window (or the host) changed the language; its event arrives first…
    const newer = settings('zh-CN', 'http://127.0.0.1:9');
    useApp.getState().applySettings(newer);
    // …and the older answer arrives after it.
    answer(settings('en', 'https://huggingface.co'));
    expect(await update).toMatchObject({ language: 'en' });
    expect(useApp.getState().settings).toBe(newer);
  });

  it('applies an answer when no event overtook it', async () => {
    const saved = settings('en', 'https://hf-mirror.com');
    handlers['settings.update'] = () => saved;
    await useApp.getState().updateSettings({ models: { host: 'https://hf-mirror.com' } });
    expect(useApp.getState().settings).toBe(saved);
    handlers['settings.get'] = () => settings('zh-CN', 'https://hf-mirror.com');
    await useApp.getState().reloadSettings();
    expect(useApp.getState().settings).toMatchObject({ language: 'zh-CN' });
  });
});
