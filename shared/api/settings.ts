// What the person can set: the settings, each section's schema (the ranges the host enforces), and
// the settings.* methods.
import { z } from 'zod';
import type { BackupSettings } from './backups.js';
import type { VaultSettings } from './vault.js';
import { empty, id, localModelId } from './fields.js';

export type Language = 'system' | 'en' | 'zh-CN';
export type Theme = 'system' | 'light' | 'dark';

export interface Settings {
  chatProviderId: string | null;
  /** The model for background work (sleep cycle); null means "same as chat". */
  backgroundProviderId: string | null;
  /** HH:MM local time at which the sleep day ends. */
  sleepTime: string;
  /** IANA time zone name, e.g. Europe/Berlin. */
  timeZone: string;
  language: Language;
  theme: Theme;
  onboarded: boolean;
  passiveRecall: boolean;
  memory: MemorySettings;
  sleep: SleepSettings;
  models: ModelSettings;
  /** The person's own backup folder and its schedule (set through backups.setFolder / setSchedule). */
  backups: BackupSettings;
  /** The vault folder kept in step (set through vault.configure). */
  vault: VaultSettings;
  /** The companion's face and first word (its name is in the self layer's identity block). */
  companion: CompanionSettings;
}

/** Colours a generated avatar (the name's initial) may take. */
export const AVATAR_COLORS = ['rose', 'amber', 'sage', 'teal', 'sky', 'violet', 'slate', 'clay'] as const;
export type AvatarColor = (typeof AVATAR_COLORS)[number];

export interface CompanionSettings {
  /** The picture's file name in <dataDir>/companion/ (set through self.setAvatar); null: the initial on `color`. */
  avatar: string | null;
  color: AvatarColor;
  /** After a good night, the companion may open the day with one short message. */
  greeting: boolean;
}

export const companionSettings = z.object({
  avatar: z
    .string()
    .regex(/^avatar-[0-9a-f]{16}\.(png|jpg|webp)$/)
    .nullable()
    .default(null),
  color: z.enum(AVATAR_COLORS).default('teal'),
  greeting: z.boolean().default(true),
});

/** On-device models: where they download from and which one memory search uses. */
export interface ModelSettings {
  /** Base URL of the model host: the Hugging Face hub or a mirror with the same paths (https://hf-mirror.com). */
  host: string;
  /** The catalogue id of the embedding model memory search uses; null = none (search by words only). */
  embedding: string | null;
  /**
   * Memory search through a model server's embedding model instead (set through
   * models.useServerForEmbeddings). Absent or null: the on-device model above. The two are exclusive:
   * choosing one clears the other.
   */
  serverEmbedding?: ServerEmbeddingChoice | null;
}

/** A saved connection (OpenAI-compatible or Ollama) and the name of the embedding model on its server. */
export interface ServerEmbeddingChoice {
  providerId: string;
  /** As the server names it, e.g. nomic-embed-text. */
  model: string;
}

export const serverEmbeddingChoice = z
  .object({
    providerId: id,
    model: z.string().trim().min(1, 'name the embedding model on your server').max(200),
  })
  .strict();

/** How memory reaches the model: passive recall before each turn, and the resident block. */
export interface MemorySettings {
  /** Most memories passive recall injects before a turn. */
  passiveLimit: number;
  /** Hits scoring below this (fused score) are not injected. */
  passiveMinScore: number;
  /** Hits scoring below this fraction of the best hit are not injected. */
  passiveMinRelativeScore: number;
  /** Character budget of the injected block; past it entries shrink to one line, then drop. */
  passiveMaxChars: number;
  /** Skip memories the resident block already carries. */
  passiveExcludeResident: boolean;
  /** Most-referenced memories the resident block carries besides the pinned ones. */
  residentTopN: number;
  /** Weight of recall's vector branch when an embedding model is set; absent or 0 = off (words only). */
  vectorWeight?: number;
}

export interface SleepSettings {
  /** Run the cycle at the sleep time and catch up at launch. Off: only "Sleep now". */
  auto: boolean;
  /** Background model calls per night; past it the cycle stops at a step boundary and finishes the next night. */
  maxCallsPerNight: number;
  maxTokensPerNight: number;
  /** Daytime memory: a quiet conversation is read once for what is worth keeping (the kill switch). */
  nap: boolean;
  /** How long a conversation must be quiet before that pass. */
  napQuietMinutes: number;
}

const hhmm = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'expected HH:MM (24-hour)');

export const memorySettings = z.object({
  passiveLimit: z.number().int().min(1).max(20),
  passiveMinScore: z.number().min(0).max(1),
  passiveMinRelativeScore: z.number().min(0).max(1),
  passiveMaxChars: z.number().int().min(200).max(20_000),
  passiveExcludeResident: z.boolean(),
  residentTopN: z.number().int().min(0).max(100),
  /** Weight of recall's vector branch when an embedding model is set; absent or 0 = off. */
  vectorWeight: z.number().min(0).max(2).optional(),
});

export const sleepSettings = z.object({
  auto: z.boolean(),
  maxCallsPerNight: z.number().int().min(1).max(10_000),
  maxTokensPerNight: z.number().int().min(1_000).max(100_000_000),
  // Defaults, so settings stored before these existed still read.
  nap: z.boolean().default(true),
  napQuietMinutes: z
    .number()
    .int()
    .min(1)
    .max(24 * 60)
    .default(10),
});

/** An http(s) address without credentials in it (the model host, a mirror). */
function isWebAddress(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && !url.username && !url.password;
  } catch {
    return false;
  }
}

export const modelSettings = z.object({
  host: z.string().trim().max(500).refine(isWebAddress, 'expected a web address starting with https:// (or http://), like https://huggingface.co'),
  embedding: localModelId.nullable(),
  serverEmbedding: serverEmbeddingChoice.nullable().optional(),
});

export const settingsInputs = {
  'settings.get': empty,
  'settings.update': z
    .object({
      chatProviderId: id.nullable().optional(),
      backgroundProviderId: id.nullable().optional(),
      sleepTime: hhmm.optional(),
      timeZone: z.string().min(1).max(64).optional(),
      language: z.enum(['system', 'en', 'zh-CN']).optional(),
      theme: z.enum(['system', 'light', 'dark']).optional(),
      onboarded: z.boolean().optional(),
      passiveRecall: z.boolean().optional(),
      memory: memorySettings.partial().strict().optional(),
      sleep: sleepSettings.partial().strict().optional(),
      // The server's embedding model is chosen through models.useServerForEmbeddings, which checks it.
      models: modelSettings.omit({ serverEmbedding: true }).partial().strict().optional(),
      // The picture and its colour are set through self.setAvatar, which stores the file.
      companion: z.object({ greeting: z.boolean().optional() }).strict().optional(),
    })
    .strict(),
} as const;

export interface SettingsOutputs {
  'settings.get': Settings;
  'settings.update': Settings;
}
