import { create } from 'zustand';
import { SELF_BLOCK_KEYS, type SelfBlock, type SelfBlockKey } from '../../shared/api.js';
import { api } from '../api/index.js';

export interface SelfState {
  blocks: Partial<Record<SelfBlockKey, SelfBlock>>;
  loaded: boolean;
  error: unknown;

  load(): Promise<void>;
  update(key: SelfBlockKey, content: string): Promise<SelfBlock>;
  reset(key: SelfBlockKey): Promise<SelfBlock>;
}

export const useSelf = create<SelfState>()((set, get) => ({
  blocks: {},
  loaded: false,
  error: null,

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
    set({ blocks: { ...get().blocks, [key]: block } });
    return block;
  },

  async reset(key) {
    const block = await api().call('self.reset', { key });
    set({ blocks: { ...get().blocks, [key]: block } });
    return block;
  },
}));
