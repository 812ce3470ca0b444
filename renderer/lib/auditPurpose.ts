// What a background model call was for, in the window's language: the host records each call under a
// purpose id (electron/sleep: the nap, light sleep, deep sleep's rounds and profiles, the dream), and the
// audit log names it here. An id without words here (one a newer host writes) shows as stored.
// Pure: tested with both languages.

type Translate = (key: string) => string;

/**
 * The purpose ids the host writes, each with its translation key. The ids hold ':' (i18next's
 * namespace separator), so they cannot be keys themselves.
 */
const PURPOSE_KEYS: ReadonlyMap<string, string> = new Map([
  ['nap', 'sleep.audit.purposes.nap'],
  ['light-sleep', 'sleep.audit.purposes.lightSleep'],
  ['deep-sleep:contradictions', 'sleep.audit.purposes.deepSleepContradictions'],
  ['deep-sleep:split', 'sleep.audit.purposes.deepSleepSplit'],
  ['deep-sleep:merge', 'sleep.audit.purposes.deepSleepMerge'],
  ['deep-sleep:profiles', 'sleep.audit.purposes.deepSleepProfiles'],
  ['dream', 'sleep.audit.purposes.dream'],
]);

/** A call's purpose in the window's language; an id without words, as it is. */
export function purposeLabel(purpose: string, t: Translate): string {
  const key = PURPOSE_KEYS.get(purpose);
  return key ? t(key) : purpose;
}
