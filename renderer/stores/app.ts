import { create } from 'zustand';
import type { ApiInput, AppInfo, Settings } from '../../shared/api.js';
import { api, type ConnectionState } from '../api/index.js';
import { errorSentence } from '../i18n/errors.js';
import { i18n } from '../i18n/index.js';
import type { UiLanguage } from '../i18n/resolve.js';

export const VIEWS = ['chat', 'diary', 'dreams', 'graph', 'pins', 'memories', 'sleep', 'settings'] as const;
export type View = (typeof VIEWS)[number];
export const SETTINGS_SECTIONS = ['models', 'companion', 'memory', 'data', 'devices', 'language', 'theme'] as const;
export type SettingsSection = (typeof SETTINGS_SECTIONS)[number];

export interface Toast {
  id: number;
  text: string;
  tone: 'info' | 'error';
  action?: { label: string; run: () => void };
}

export interface AppState {
  phase: 'booting' | 'ready' | 'failed';
  bootError: unknown;
  info: AppInfo | null;
  settings: Settings | null;
  /** What is on screen now: the theme and language settings resolved against the system's. */
  theme: 'light' | 'dark';
  language: UiLanguage;
  /** Repairs made at start that the person should hear about; dismissed one by one. */
  notices: string[];
  view: View;
  settingsSection: SettingsSection;
  toasts: Toast[];
  connection: ConnectionState;

  boot(): Promise<void>;
  reloadSettings(): Promise<void>;
  updateSettings(patch: ApiInput<'settings.update'>): Promise<Settings>;
  /** From the settings.changed event (another window, or the host itself). */
  applySettings(settings: Settings): void;
  setView(view: View, section?: SettingsSection): void;
  dismissNotice(index: number): void;
  toast(toast: Omit<Toast, 'id'>, ms?: number): number;
  dismissToast(id: number): void;
  setConnection(state: ConnectionState): void;
  setAppearance(theme: 'light' | 'dark', language: UiLanguage): void;
}

let nextToastId = 1;
/**
 * settings.changed events applied so far. A call's answer and the events travel separately (HTTP and
 * the event stream): an answer that comes back after an event is older news — another change landed
 * in between — and is not applied over it (the host announces every change, ours included).
 */
let settingsSeen = 0;
const toastTimers = new Map<number, ReturnType<typeof setTimeout>>();

export const useApp = create<AppState>()((set, get) => ({
  phase: 'booting',
  bootError: null,
  info: null,
  settings: null,
  theme: 'light',
  language: 'en',
  notices: [],
  view: 'chat',
  settingsSection: 'models',
  toasts: [],
  connection: 'connecting',

  async boot() {
    set({ phase: 'booting', bootError: null });
    try {
      const [info, settings] = await Promise.all([api().call('app.info', {}), api().call('settings.get', {})]);
      set({ info, settings, notices: info.notices, phase: 'ready' });
    } catch (err) {
      set({ phase: 'failed', bootError: err });
    }
  },

  async reloadSettings() {
    const seen = settingsSeen;
    const settings = await api().call('settings.get', {});
    if (seen === settingsSeen) set({ settings });
  },

  async updateSettings(patch) {
    const seen = settingsSeen;
    const settings = await api().call('settings.update', patch);
    if (seen === settingsSeen) set({ settings });
    return settings;
  },

  applySettings(settings) {
    settingsSeen++;
    set({ settings });
  },

  setView(view, section) {
    set(section ? { view, settingsSection: section } : { view });
  },

  dismissNotice(index) {
    set({ notices: get().notices.filter((_, i) => i !== index) });
  },

  toast(toast, ms = toast.action ? 8000 : 5000) {
    const id = nextToastId++;
    // Three at most: a pile of toasts is noise, not information.
    set({ toasts: [...get().toasts, { ...toast, id }].slice(-3) });
    toastTimers.set(
      id,
      setTimeout(() => get().dismissToast(id), ms),
    );
    return id;
  },

  dismissToast(id) {
    clearTimeout(toastTimers.get(id));
    toastTimers.delete(id);
    set({ toasts: get().toasts.filter((t) => t.id !== id) });
  },

  setConnection(connection) {
    set({ connection });
  },

  setAppearance(theme, language) {
    if (get().theme !== theme || get().language !== language) set({ theme, language });
  },
}));

/** A failed action in words, as an error toast. */
export function reportError(err: unknown): void {
  useApp.getState().toast({ tone: 'error', text: errorSentence(i18n.t.bind(i18n), err) });
}
