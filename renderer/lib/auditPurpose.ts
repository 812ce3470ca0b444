// What a background model call was for, in the window's language: the host records each call under a
// purpose id (shared/background-purposes.ts: the nap, light sleep, deep sleep's rounds and profiles, the
// dream), and the audit log names it here. An id without words here (one a newer host writes) shows as stored.
// Pure: tested with both languages.

import { BACKGROUND_PURPOSES, type BackgroundPurpose } from '../../shared/background-purposes.js';

type Translate = (key: string) => string;

/**
 * Each purpose the host writes (shared/background-purposes.ts), with its translation key: typed by that
 * list, so a purpose added there does not build without its words here. The ids hold ':' (i18next's
 * namespace separator), so they cannot be keys themselves.
 */
const PURPOSE_KEYS: Readonly<Record<BackgroundPurpose, string>> = {
  nap: 'sleep.audit.purposes.nap',
  'light-sleep': 'sleep.audit.purposes.lightSleep',
  'deep-sleep:contradictions': 'sleep.audit.purposes.deepSleepContradictions',
  'deep-sleep:split': 'sleep.audit.purposes.deepSleepSplit',
  'deep-sleep:merge': 'sleep.audit.purposes.deepSleepMerge',
  'deep-sleep:profiles': 'sleep.audit.purposes.deepSleepProfiles',
  dream: 'sleep.audit.purposes.dream',
};

const isPurpose = (id: string): id is BackgroundPurpose => (BACKGROUND_PURPOSES as readonly string[]).includes(id);

/** A call's purpose in the window's language; an id without words (a newer host's), as it is. */
export function purposeLabel(purpose: string, t: Translate): string {
  return isPurpose(purpose) ? t(PURPOSE_KEYS[purpose]) : purpose;
}
