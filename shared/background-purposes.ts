// What a background model call is for: the host records each call under one of these ids (the audit
// log, the answer's schema name, the task line the model reads), and the window names each in its
// language (renderer/lib/auditPurpose.ts). One list for both, so a new purpose cannot reach the
// window without its words: the renderer's table is typed by it.

export const BACKGROUND_PURPOSES = [
  'nap',
  'light-sleep',
  'deep-sleep:contradictions',
  'deep-sleep:split',
  'deep-sleep:merge',
  'deep-sleep:profiles',
  'dream',
] as const;

export type BackgroundPurpose = (typeof BACKGROUND_PURPOSES)[number];
