// Settings live in the database, one row per key, each validated when read: a corrupted row is
// reset to its default, repaired on disk, and reported to the person as a notice.
import { z } from 'zod';
import { memorySettings, modelSettings, sleepSettings, type MemorySettings, type ModelSettings, type Settings, type SleepSettings } from '../../shared/api.js';
import { companionSettings, type CompanionSettings } from '../../shared/api/settings.js';

export const DEFAULT_MEMORY_SETTINGS: MemorySettings = {
  passiveLimit: 5,
  passiveMinScore: 0,
  passiveMinRelativeScore: 0.5,
  passiveMaxChars: 2000,
  passiveExcludeResident: true,
  residentTopN: 20,
};

/**
 * A night of light sleep over a busy day is a handful of calls (one per sleep day that fits the
 * context), deep sleep at most six, the dream one; 60 calls and 400k tokens leave room for a week of
 * catch-up while capping what a paid provider can cost in one night (about a dollar on a small model).
 */
export const DEFAULT_SLEEP_SETTINGS: SleepSettings = {
  auto: true,
  maxCallsPerNight: 60,
  maxTokensPerNight: 400_000,
  nap: true,
  napQuietMinutes: 10,
};
import { backupSettings } from '../../shared/api/backups.js';
import { vaultSettings } from '../../shared/api/vault.js';
import { DEFAULT_SLEEP_TIME, isValidTimeZone } from '../../shared/sleep-day.js';
import type { Transaction } from '../db/database.js';
import type { Database } from '../db/open.js';
import { DEFAULT_MODEL_HOST } from '../models/download.js';

/** The Hugging Face hub; people who cannot reach it set a mirror (https://hf-mirror.com). */
export const DEFAULT_MODEL_SETTINGS: ModelSettings = {
  host: DEFAULT_MODEL_HOST,
  embedding: null,
};

const schemas = {
  chatProviderId: z.string().min(1).nullable(),
  backgroundProviderId: z.string().min(1).nullable(),
  sleepTime: z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/),
  timeZone: z.string().refine(isValidTimeZone),
  language: z.enum(['system', 'en', 'zh-CN']),
  theme: z.enum(['system', 'light', 'dark']),
  onboarded: z.boolean(),
  passiveRecall: z.boolean(),
  memory: memorySettings,
  sleep: sleepSettings,
  models: modelSettings,
  backups: backupSettings,
  vault: vaultSettings,
  companion: companionSettings,
} satisfies { [K in keyof Settings]: z.ZodType<Settings[K]> };

function systemTimeZone(): string {
  const tz = Intl.DateTimeFormat().resolvedOptions().timeZone;
  return tz && isValidTimeZone(tz) ? tz : 'UTC';
}

export function defaultSettings(): Settings {
  return {
    chatProviderId: null,
    backgroundProviderId: null,
    sleepTime: DEFAULT_SLEEP_TIME,
    timeZone: systemTimeZone(),
    language: 'system',
    theme: 'system',
    onboarded: false,
    passiveRecall: true,
    memory: { ...DEFAULT_MEMORY_SETTINGS },
    sleep: { ...DEFAULT_SLEEP_SETTINGS },
    models: { ...DEFAULT_MODEL_SETTINGS },
    backups: backupSettings.parse({}),
    vault: vaultSettings.parse({}),
    companion: companionSettings.parse({}),
  };
}

const KEYS = Object.keys(schemas) as (keyof Settings)[];

/**
 * A models patch merged into what is stored. Memory search has one source: choosing the on-device
 * model (or none) clears the server's model, and choosing the server's clears the on-device one.
 */
function mergeModels(current: ModelSettings, patch: Partial<ModelSettings>): ModelSettings {
  const next = { ...current, ...patch };
  if (patch.serverEmbedding) next.embedding = null;
  else if (patch.embedding !== undefined && patch.serverEmbedding === undefined) next.serverEmbedding = null;
  return next;
}

/** Like Settings, but the memory, sleep and models blocks may be partial (they merge into what is stored). */
export type SettingsPatch = Partial<Omit<Settings, 'memory' | 'sleep' | 'models' | 'companion'>> & {
  memory?: Partial<MemorySettings>;
  sleep?: Partial<SleepSettings>;
  models?: Partial<ModelSettings>;
  companion?: Partial<CompanionSettings>;
};

export class SettingsStore {
  private cache: Settings | undefined;

  constructor(
    private readonly db: Database,
    private readonly notice: (message: string) => void,
    /** Every committed update, whoever made it (the API, a model deleted, a connection removed): the host announces it. */
    private readonly onChanged: (settings: Settings) => void = () => {},
  ) {}

  async get(): Promise<Settings> {
    if (this.cache) return this.cache;
    const rows = (await this.db.query<{ key: string; value: unknown }>('SELECT key, value FROM settings')).rows;
    const stored = new Map(rows.map((r) => [r.key, r.value]));
    const settings = defaultSettings() as Record<keyof Settings, unknown>;
    for (const key of KEYS) {
      if (!stored.has(key)) continue;
      const parsed = schemas[key].safeParse(stored.get(key));
      if (parsed.success) {
        settings[key] = parsed.data;
      } else {
        this.notice(`The setting “${key}” was unreadable and has been reset to its default.`);
        await this.db.query('DELETE FROM settings WHERE key = $1', [key]);
      }
    }
    this.cache = settings as Settings;
    return this.cache;
  }

  /**
   * Forgets what was read and reads the table again (another Anima wrote it while this one's
   * PostgreSQL connection was down: db.onLockRetaken); if the settings differ, they are announced as
   * any change is. The forgetting happens at once, before the first await.
   */
  async reload(): Promise<Settings> {
    const before = this.cache;
    this.cache = undefined;
    const next = await this.get();
    if (before && JSON.stringify(before) !== JSON.stringify(next)) this.onChanged(next);
    return next;
  }

  /**
   * Settings from Anima's own archive (electron/imports/anima-archive.ts), inside the importer's
   * transaction: each known key whose value passes its check and that is not set here yet. `vault` is
   * left out: it names a folder on the machine the archive came from, which a sync would read as
   * every memory file deleted. Returns the keys written; the next read sees them.
   */
  async restoreMissing(tx: Transaction, rows: { key: unknown; value: unknown; updated_at?: unknown }[]): Promise<string[]> {
    const written: string[] = [];
    for (const row of rows) {
      const key = row.key as keyof Settings;
      if (typeof row.key !== 'string' || !KEYS.includes(key) || key === 'vault' || !schemas[key].safeParse(row.value).success) continue;
      const r = await tx.query(
        'INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, coalesce($3::timestamptz, now())) ON CONFLICT (key) DO NOTHING RETURNING key',
        [key, JSON.stringify(row.value), typeof row.updated_at === 'string' ? row.updated_at : null],
      );
      if (r.rows.length) written.push(key);
    }
    this.cache = undefined;
    return written;
  }

  async update(patch: SettingsPatch): Promise<Settings> {
    const current = await this.get();
    const next = { ...current };
    await this.db.transaction(async (tx) => {
      for (const key of KEYS) {
        if (!(key in patch) || patch[key] === undefined) continue;
        // A partial memory, sleep or models patch merges into what is stored.
        const raw =
          key === 'memory'
            ? { ...current.memory, ...patch.memory }
            : key === 'sleep'
              ? { ...current.sleep, ...patch.sleep }
              : key === 'models'
                ? mergeModels(current.models, patch.models ?? {})
                : key === 'companion'
                  ? { ...current.companion, ...patch.companion }
                  : patch[key];
        const value = schemas[key].parse(raw);
        (next as Record<string, unknown>)[key] = value;
        await tx.query(
          `INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, now())
           ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
          [key, JSON.stringify(value)],
        );
      }
    });
    this.cache = next;
    this.onChanged(next);
    return next;
  }
}
