// The diary the sleep cycle writes: anchors, imprints, narratives, dreams and digests by sleep day,
// mood over time, and the diary.* and dreams.* methods.
import { z } from 'zod';
import { isoDay } from './fields.js';

export const DIARY_KINDS = ['anchor', 'imprint', 'narrative', 'dream', 'digest'] as const;
export type DiaryKind = (typeof DIARY_KINDS)[number];

/** How a conversation felt: valence -1 (low) … 1 (bright), arousal 0 (calm) … 1 (intense). */
export interface Mood {
  valence: number;
  arousal: number;
  labels: string[];
}

/** One append-only diary row: an anchor, an imprint, a narrative, a dream or a morning digest. */
export interface DiaryBlock {
  id: number;
  /** The sleep day it belongs to (YYYY-MM-DD). */
  day: string;
  kind: DiaryKind;
  conversationId: string | null;
  title: string | null;
  body: string;
  mood: Mood | null;
  createdAt: string;
  /** Set when the person hid it (a tombstone: the text stays, out of view and recall). */
  hiddenAt: string | null;
}

export interface DiaryDay {
  day: string;
  /** The mean of the day's anchors; null when the day has none. */
  mood: Mood | null;
  anchors: DiaryBlock[];
  imprints: DiaryBlock[];
  narratives: DiaryBlock[];
}

export interface MoodPoint {
  day: string;
  /** Mean of the day's anchors. */
  valence: number;
  arousal: number;
  anchors: number;
  /** Trailing means over the last 7 and 30 calendar days that have anchors (this day included). */
  valence7: number;
  valence30: number;
  arousal7: number;
  arousal30: number;
}

export const diaryInputs = {
  /** Diary days, newest first; `before` pages back (exclusive). */
  'diary.days': z
    .object({
      limit: z.number().int().min(1).max(90).optional(),
      before: isoDay.optional(),
    })
    .strict(),
  /** Daily mood from anchors with 7- and 30-day trends, for the last `days` days that have anchors. */
  'diary.mood': z.object({ days: z.number().int().min(1).max(366).optional() }).strict(),
  /** Hide a diary block (a tombstone: the text is kept); hidden: false brings it back. */
  'diary.hide': z.object({ id: z.number().int().positive(), hidden: z.boolean() }).strict(),
  /** Dreams, newest first, with their text. */
  'dreams.list': z.object({ limit: z.number().int().min(1).max(366).optional() }).strict(),
} as const;

export interface DiaryOutputs {
  'diary.days': DiaryDay[];
  'diary.mood': MoodPoint[];
  'diary.hide': DiaryBlock;
  'dreams.list': DiaryBlock[];
}
