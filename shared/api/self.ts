// The self layer: the companion's blocks (identity, personality, …) and the self.* methods.
import { z } from 'zod';
import type { Message } from './conversations.js';
import { empty } from './fields.js';
import { AVATAR_COLORS, type AvatarColor } from './settings.js';

export const SELF_BLOCK_KEYS = ['identity', 'personality', 'values', 'relationship', 'voice', 'narrative'] as const;
export type SelfBlockKey = (typeof SELF_BLOCK_KEYS)[number];

export interface SelfBlock {
  key: SelfBlockKey;
  content: string;
  isDefault: boolean;
  updatedAt: string;
}

/** The companion as the app shows it: the name its identity block says, and its face. */
export interface CompanionProfile {
  name: string;
  /** The picture as a data: URL; null: the name's initial on `color`. */
  avatar: string | null;
  color: AvatarColor;
}

/** Why the companion did not speak first (self.greet). */
export type GreetSkip =
  'off' | 'greeted' | 'no_night' | 'sleeping' | 'night_failed' | 'nothing_new' | 'talked_since' | 'no_provider' | 'no_conversation' | 'busy';

export interface GreetResult {
  /** The morning message, being written (it streams like any reply), or null with the reason. */
  message: Message | null;
  conversationId: string | null;
  skipped: GreetSkip | null;
}

export const selfInputs = {
  'self.list': empty,
  'self.update': z.object({ key: z.enum(SELF_BLOCK_KEYS), content: z.string().max(20_000) }).strict(),
  'self.reset': z.object({ key: z.enum(SELF_BLOCK_KEYS) }).strict(),
  'self.profile': empty,
  /** Renames the companion: its identity block says the new name. */
  'self.rename': z.object({ name: z.string().max(200) }).strict(),
  /** A picture (a data: URL of a PNG, JPEG or WebP; null: back to the initial) and/or the initial's colour. */
  'self.setAvatar': z.object({ image: z.string().max(800_000).nullable().optional(), color: z.enum(AVATAR_COLORS).optional() }).strict(),
  /** Asked when the app opens or gets focus: after a good night, the companion may open the day with one short message. */
  'self.greet': empty,
} as const;

export interface SelfOutputs {
  'self.list': SelfBlock[];
  'self.update': SelfBlock;
  'self.reset': SelfBlock;
  'self.profile': CompanionProfile;
  'self.rename': CompanionProfile;
  'self.setAvatar': CompanionProfile;
  'self.greet': GreetResult;
}
