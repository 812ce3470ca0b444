import { create } from 'zustand';
import { SELF_BLOCK_KEYS, type SelfBlock, type SelfBlockKey } from '../../shared/api.js';
import type { CompanionProfile } from '../../shared/api/self.js';
import type { AvatarColor } from '../../shared/api/settings.js';
import { nameOf } from '../../shared/companion-name.js';
import { api } from '../api/index.js';

export interface SelfState {
  blocks: Partial<Record<SelfBlockKey, SelfBlock>>;
  loaded: boolean;
  error: unknown;

  /** The companion as the app shows it (name and face); null until loaded. */
  profile: CompanionProfile | null;

  load(): Promise<void>;
  update(key: SelfBlockKey, content: string): Promise<SelfBlock>;
  reset(key: SelfBlockKey): Promise<SelfBlock>;
  loadProfile(): Promise<void>;
  rename(name: string): Promise<CompanionProfile>;
  setAvatar(change: { image?: string | null; color?: AvatarColor }): Promise<CompanionProfile>;
}

/** A saved identity block may say another name: every place that shows it follows at once. */
function withIdentity(profile: CompanionProfile | null, block: SelfBlock): CompanionProfile | null {
  return profile && block.key === 'identity' ? { ...profile, name: nameOf(block.content) } : profile;
}

export const useSelf = create<SelfState>()((set, get) => ({
  blocks: {},
  loaded: false,
  error: null,
  profile: null,

  async load() {
    try {
      const list = await api().call('self.list', {});
      const blocks: Partial<Record<SelfBlockKey, SelfBlock>> = {};
      for (const b of list) if ((SELF_BLOCK_KEYS as readonly string[]).includes(b.key)) blocks[b.key] = b;
      set({ blocks, loaded: true, error: null });
    } catch (error) {
      set({ loaded: true, error });
    }
  },

  async update(key, content) {
    const block = await api().call('self.update', { key, content });
    set({ blocks: { ...get().blocks, [key]: block }, profile: withIdentity(get().profile, block) });
    return block;
  },

  async reset(key) {
    const block = await api().call('self.reset', { key });
    set({ blocks: { ...get().blocks, [key]: block }, profile: withIdentity(get().profile, block) });
    return block;
  },

  async loadProfile() {
    set({ profile: await api().call('self.profile', {}) });
  },

  async rename(name) {
    const profile = await api().call('self.rename', { name });
    set({ profile });
    // The identity block now says the new name.
    void get().load();
    return profile;
  },

  async setAvatar(change) {
    const profile = await api().call('self.setAvatar', change);
    set({ profile });
    return profile;
  },
}));
