// What the running app says about itself (version, mode, data folder, notices), and app.info.
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

export const appInputs = {
  'app.info': empty,
} as const;

export interface AppOutputs {
  'app.info': AppInfo;
}
