import { create } from 'zustand';
import type { ApiInput, ConnectionTestResult, DetectedServer, ProviderConfig } from '../../shared/api.js';
import { api } from '../api/index.js';

export interface TestState {
  running: boolean;
  result: ConnectionTestResult | null;
  /** The call itself failed (not the same as a test that ran and reported ok: false). */
  error: unknown;
}

export interface ProvidersState {
  items: ProviderConfig[];
  loaded: boolean;
  detected: DetectedServer[] | null;
  detecting: boolean;
  /** By form key: a provider id, or 'new' / 'onboarding' for unsaved forms. */
  tests: Record<string, TestState>;

  refresh(): Promise<void>;
  save(input: ApiInput<'providers.save'>): Promise<ProviderConfig>;
  remove(id: string): Promise<void>;
  test(key: string, input: ApiInput<'providers.test'>): Promise<ConnectionTestResult | null>;
  clearTest(key: string): void;
  detect(): Promise<void>;
}

export const useProviders = create<ProvidersState>()((set, get) => ({
  items: [],
  loaded: false,
  detected: null,
  detecting: false,
  tests: {},

  async refresh() {
    const items = await api().call('providers.list', {});
    set({ items, loaded: true });
  },

  async save(input) {
    const saved = await api().call('providers.save', input);
    const items = get().items;
    set({ items: items.some((p) => p.id === saved.id) ? items.map((p) => (p.id === saved.id ? saved : p)) : [...items, saved] });
    return saved;
  },

  async remove(id) {
    await api().call('providers.delete', { id });
    set({ items: get().items.filter((p) => p.id !== id) });
  },

  async test(key, input) {
    set({ tests: { ...get().tests, [key]: { running: true, result: get().tests[key]?.result ?? null, error: null } } });
    try {
      const result = await api().call('providers.test', input);
      set({ tests: { ...get().tests, [key]: { running: false, result, error: null } } });
      return result;
    } catch (error) {
      set({ tests: { ...get().tests, [key]: { running: false, result: null, error } } });
      return null;
    }
  },

  clearTest(key) {
    const tests = { ...get().tests };
    delete tests[key];
    set({ tests });
  },

  async detect() {
    if (get().detecting) return;
    set({ detecting: true });
    try {
      const detected = await api().call('providers.detect', {});
      set({ detected, detecting: false });
    } catch {
      set({ detected: [], detecting: false });
    }
  },
}));
