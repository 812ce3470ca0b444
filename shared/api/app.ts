// What the running app says about itself (version, mode, data folder, notices), and app.info.
import { z } from 'zod';
import { empty } from './fields.js';

export interface AppInfo {
  version: string;
  mode: 'electron' | 'browser';
  dataDir: string;
  /** How API keys are kept: encrypted by the OS keychain (desktop) or a file only this user can read (browser mode). */
  secretStorage: 'os-encrypted' | 'owner-only-file';
  /** The current sleep day (YYYY-MM-DD) in the configured time zone. */
  sleepDay: string;
  /** Things a person should know that were repaired at start (e.g. an unreadable setting reset to its default). */
  notices: string[];
}

/**
 * The word "Erase everything" asks the person to type, per language; the host accepts any of them
 * (a person may type the word shown in either language). Compared trimmed and case-insensitively.
 */
export const ERASE_WORDS = { en: 'erase', 'zh-CN': '清除' } as const;

/** What "Erase everything" removed from the data folder, for the person to read. */
export interface EraseResult {
  /** Safety copies removed from the data folder (nightly, made by you, before each restore). */
  safetyCopies: number;
  /** Database folders a restore had replaced (the restore's undo). */
  previousData: number;
  /** Exported archives in the data folder's exports folder. */
  exports: number;
  /** Whether a file of saved API keys was there and is gone. */
  keys: boolean;
  /** The person's own backup folder, left as it was (its copies are not touched); null when none was chosen. */
  backupFolder: string | null;
  /** Names that could not be removed now; the next start removes them. Empty when all went. */
  left: string[];
}

export const appInputs = {
  'app.info': empty,
  'app.eraseEverything': z.object({ confirm: z.string().max(100) }).strict(),
  /** Browser mode: a new token for this data folder's link; every open tab's old one is refused from then on. */
  'app.resetBrowserLink': empty,
} as const;

export interface AppOutputs {
  'app.info': AppInfo;
  'app.eraseEverything': EraseResult;
  /** The new token (the address is unchanged). */
  'app.resetBrowserLink': { token: string };
}
