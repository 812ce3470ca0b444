// The companion speaks first, gently: after a good night, the first time the app is opened that
// sleep day, one short message drawn from what the night wrote (the digest and the diary). It is a
// real reply — the chat model, the usual system prompt, resident memory and passive recall — asked
// for by a note the model reads as the last turn and that is never stored (ChatEngine.speakFirst).
//
// Never: with the switch off (settings.companion.greeting), twice on one sleep day (a claimed row,
// companion_greetings; two windows asking at once share one answer), after a night that failed or
// did not finish, after a night that left nothing new, when the person has spoken since the night,
// or about a night older than the last one.
import type { GreetResult, GreetSkip } from '../../shared/api/self.js';
import { sleepDay } from '../../shared/sleep-day.js';
import type { Greetings } from '../companion/greetings.js';
import type { Conversations } from '../conversations/conversations.js';
import type { SettingsStore } from '../settings/settings.js';
import type { ChatEngine } from './chat.js';

/** The latest night, as the sleep room tells it (wired by the host from sleep/read.ts). */
export interface LastNight {
  runId: number;
  /** The sleep day the night worked on. */
  sleepDay: string;
  status: 'running' | 'done' | 'failed' | 'stopped';
  finishedAt: Date | null;
  /** The digest's own words ("While I slept I …"), when the night wrote one. */
  digest: string | null;
  /** What the night kept or changed in memory, in words (the digest's items). */
  memories: string[];
  /** The day's diary: narratives first, then anchors. */
  diary: string[];
}

export interface GreeterDeps {
  settings: SettingsStore;
  conversations: Conversations;
  chat: Pick<ChatEngine, 'speakFirst' | 'isStreaming'>;
  greetings: Greetings;
  lastNight: () => Promise<LastNight | null>;
  now: () => Date;
  log: (level: 'info' | 'warn' | 'error', message: string) => void;
}

/** How much of the night the note carries: a greeting is a line or two, not a report. */
const MAX_MEMORIES = 6;
const MAX_DIARY = 3;
const MAX_NOTE_CHARS = 2400;

/** The day before a sleep day (YYYY-MM-DD). */
export function dayBefore(day: string): string {
  const d = new Date(`${day}T12:00:00Z`);
  d.setUTCDate(d.getUTCDate() - 1);
  return d.toISOString().slice(0, 10);
}

/** The note the model reads as the last turn: who it is for, how short, and what the night left. */
export function greetingNote(night: LastNight): string {
  const lines = [
    '(A note to myself, not words of the person’s: they just opened the app, for the first time since I slept. ' +
      'I may open the day with one short, gentle message — two or three sentences — drawn from what I slept on below: ' +
      'one thing I noticed or keep thinking about, said warmly, perhaps with one light question. ' +
      'Not a report of what I did in my sleep, no lists, no headings, no memory markers; in the language we usually speak.)',
  ];
  if (night.digest?.trim()) lines.push('', 'What I wrote this morning:', night.digest.trim());
  if (night.memories.length) lines.push('', 'What I kept from our days:', ...night.memories.slice(0, MAX_MEMORIES).map((m) => `- ${m.trim()}`));
  if (night.diary.length) lines.push('', 'My diary:', ...night.diary.slice(0, MAX_DIARY).map((d) => `- ${d.trim()}`));
  const note = lines.join('\n');
  return note.length > MAX_NOTE_CHARS ? `${note.slice(0, MAX_NOTE_CHARS - 1)}…` : note;
}

export class Greeter {
  private pending: Promise<GreetResult> | null = null;

  constructor(private readonly deps: GreeterDeps) {}

  /** Two asks at once (two windows, a focus during a start) share one answer, so one message at most. */
  greet(): Promise<GreetResult> {
    this.pending ??= this.decide().finally(() => {
      this.pending = null;
    });
    return this.pending;
  }

  private async decide(): Promise<GreetResult> {
    const { settings, conversations, chat, greetings, lastNight, now, log } = this.deps;
    const skip = (skipped: GreetSkip): GreetResult => ({ message: null, conversationId: null, skipped });
    const s = await settings.get();
    if (!s.companion.greeting) return skip('off');
    const today = sleepDay(now(), s.sleepTime, s.timeZone);
    const state = await greetings.state(today);
    if (state.greetedToday) return skip('greeted');
    const night = await lastNight();
    // Only last night (the cycle runs for the sleep day that just ended) or one slept today ("Sleep now").
    if (!night || night.sleepDay < dayBefore(today)) return skip('no_night');
    if (state.lastRunId !== null && state.lastRunId >= night.runId) return skip('greeted');
    if (night.status === 'running') return skip('sleeping');
    if (night.status !== 'done') return skip('night_failed');
    if (!night.digest?.trim() && night.memories.length === 0 && night.diary.length === 0) return skip('nothing_new');
    if (!s.chatProviderId) return skip('no_provider');
    // The conversation the person was last in: the morning continues it.
    const recent = (await conversations.list({})).find((c) => !c.offRecord && c.messageCount > 0);
    if (!recent) return skip('no_conversation');
    if (chat.isStreaming(recent.id)) return skip('busy');
    const lastWords = (await conversations.messages(recent.id)).findLast((m) => m.role === 'user');
    if (lastWords && night.finishedAt && new Date(lastWords.createdAt) > night.finishedAt) return skip('talked_since');
    if (!(await greetings.claim(today, night.runId))) return skip('greeted');
    try {
      const message = await chat.speakFirst(recent.id, greetingNote(night));
      await greetings.wrote(today, recent.id, message.id);
      log('info', `the companion opened ${today} in ${recent.id}`);
      return { message, conversationId: recent.id, skipped: null };
    } catch (err) {
      await greetings.release(today);
      log('warn', `no morning message: ${(err as Error).message}`);
      return skip('busy');
    }
  }
}
