// The self layer: the companion's blocks (identity, personality, …) and the self.* methods.
import { z } from 'zod';
import { empty } from './fields.js';

export const SELF_BLOCK_KEYS = ['identity', 'personality', 'values', 'relationship', 'voice', 'narrative'] as const;
export type SelfBlockKey = (typeof SELF_BLOCK_KEYS)[number];

export interface SelfBlock {
  key: SelfBlockKey;
  content: string;
  isDefault: boolean;
  updatedAt: string;
}

export const selfInputs = {
  'self.list': empty,
  'self.update': z.object({ key: z.enum(SELF_BLOCK_KEYS), content: z.string().max(20_000) }).strict(),
  'self.reset': z.object({ key: z.enum(SELF_BLOCK_KEYS) }).strict(),
} as const;

export interface SelfOutputs {
  'self.list': SelfBlock[];
  'self.update': SelfBlock;
  'self.reset': SelfBlock;
}
