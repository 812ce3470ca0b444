// Loads a LoCoMo conversation file (Maharana et al., 2024) through the app's own write path,
// `Conversations.appendMany` (a session in one transaction; the same rows `append` writes one by one),
// so what the benchmark searches is exactly what the app would have stored: the same columns, the
// same jieba segmentation, the same generated tsvector.
//
// Shape of the import:
// - each `session_N` becomes one conversation, titled "A & B — session N", its messages dated
//   from `session_N_date_time` (read as UTC: the dataset gives no zone);
// - `speaker` is the participant's name; role is 'user' for both participants. Neither of them is
//   the companion, and role 'assistant' would make the companion own words it never said (a model
//   continuing such a conversation reads 'assistant' turns as its own);
// - a shared photo's caption is part of the turn: ` [shared a photo: <blip_caption>]`;
// - `events_session_N`, `session_N_observation`, `session_N_summary` and `qa` are never stored:
//   they were written by the dataset's authors and hold the answers.
import type { Conversations } from './conversations.js';

export interface LocomoTurn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}

export interface LocomoQa {
  question: string;
  evidence: string[];
  category: number;
}

export interface ImportedLocomo {
  speakers: [string, string];
  /** One per session, in session order. */
  conversationIds: string[];
  /** dia_id ("D3:7") → the message that holds the turn. */
  turns: Map<string, { conversationId: string; messageId: string }>;
  /** The questions, evidence normalised (see normaliseEvidence) — never stored in the database. */
  qa: { question: string; category: number; evidence: string[] }[];
  messageCount: number;
}

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/** "1:56 pm on 8 May, 2023" → that instant in UTC; null when it does not read as such a date. */
export function parseLocomoDate(text: unknown): Date | null {
  if (typeof text !== 'string') return null;
  const m = /^\s*(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$/i.exec(text);
  if (!m) {
    const t = Date.parse(text);
    return Number.isNaN(t) ? null : new Date(t);
  }
  const month = MONTHS.findIndex((name) => name.startsWith(m[5]!.toLowerCase().slice(0, 3)));
  if (month < 0) return null;
  let hour = Number(m[1]) % 12;
  if (m[3]!.toLowerCase() === 'p') hour += 12;
  return new Date(Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2])));
}

/**
 * Evidence ids as the dataset should have written them. Some entries are malformed: several ids in
 * one string ("D8:6; D9:17"), "D:11:26" for D11:26, zero-padded "D30:05". Anything that still does
 * not read as D<session>:<turn> is dropped; so are ids of turns that do not exist (when `known` is
 * given).
 */
export function normaliseEvidence(evidence: unknown, known?: ReadonlySet<string>): string[] {
  if (!Array.isArray(evidence)) return [];
  const out: string[] = [];
  for (const entry of evidence) {
    if (typeof entry !== 'string') continue;
    for (const piece of entry.split(/[;,\s]+/)) {
      const m = /^D:?(\d+):0*(\d+)$/i.exec(piece.trim());
      if (!m) continue;
      const id = `D${Number(m[1])}:${Number(m[2])}`;
      if (known && !known.has(id)) continue;
      if (!out.includes(id)) out.push(id);
    }
  }
  return out;
}

function normaliseDiaId(id: unknown): string | null {
  return normaliseEvidence([id])[0] ?? null;
}

/** The stored text of a turn: its words, then the caption of a photo it shared. */
export function turnContent(turn: { text?: unknown; blip_caption?: unknown }): string {
  const text = typeof turn.text === 'string' ? turn.text : '';
  const caption = typeof turn.blip_caption === 'string' ? turn.blip_caption.trim() : '';
  return caption ? `${text} [shared a photo: ${caption}]` : text;
}

/** The sessions of a file in order: [N, turns]. Only `session_N` keys holding a list count. */
function sessionsOf(data: Record<string, unknown>): [number, unknown[]][] {
  return Object.entries(data)
    .map(([key, value]) => [/^session_(\d+)$/.exec(key), value] as const)
    .filter((e): e is [RegExpExecArray, unknown[]] => e[0] !== null && Array.isArray(e[1]))
    .map(([m, value]) => [Number(m[1]), value] as [number, unknown[]])
    .sort((a, b) => a[0] - b[0]);
}

/** Imports one LoCoMo conversation. Throws on a file that is not in that format. */
export async function importLocomo(conversations: Conversations, raw: unknown): Promise<ImportedLocomo> {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new Error('not a LoCoMo conversation (expected an object)');
  // Some distributions wrap the conversation as { conversation: {...}, qa: [...] }.
  const outer = raw as Record<string, unknown>;
  const data = (outer.conversation && typeof outer.conversation === 'object' ? outer.conversation : outer) as Record<string, unknown>;
  const a = typeof data.speaker_a === 'string' ? data.speaker_a : null;
  const b = typeof data.speaker_b === 'string' ? data.speaker_b : null;
  const sessions = sessionsOf(data);
  if (!a || !b || sessions.length === 0) throw new Error('not a LoCoMo conversation (speaker_a, speaker_b and session_N are required)');

  const result: ImportedLocomo = { speakers: [a, b], conversationIds: [], turns: new Map(), qa: [], messageCount: 0 };
  let previous: Date | null = null;
  for (const [n, turns] of sessions) {
    // A session without a readable date follows the previous one by a day (order is what matters).
    const date: Date = parseLocomoDate(data[`session_${n}_date_time`]) ?? (previous ? new Date(previous.getTime() + 86_400_000) : new Date(0));
    previous = date;
    const conversation = await conversations.create(`${a} & ${b} — session ${n}`);
    result.conversationIds.push(conversation.id);
    const kept: { content: string; speaker: string | null; diaId: string | null }[] = [];
    for (const t of turns) {
      if (!t || typeof t !== 'object') continue;
      const turn = t as Record<string, unknown>;
      const content = turnContent(turn);
      if (!content.trim()) continue;
      const speaker = typeof turn.speaker === 'string' && turn.speaker.trim() ? turn.speaker.trim() : null;
      kept.push({ content, speaker, diaId: normaliseDiaId(turn.dia_id) });
    }
    // The session's turns in one transaction (the rows one append per turn would write).
    const stored = await conversations.appendMany(
      conversation.id,
      kept.map((k) => ({ role: 'user' as const, content: k.content, status: 'complete' as const, speaker: k.speaker, createdAt: date })),
    );
    kept.forEach((k, i) => {
      result.messageCount++;
      if (k.diaId && !result.turns.has(k.diaId)) result.turns.set(k.diaId, { conversationId: conversation.id, messageId: stored[i]!.id });
    });
  }

  const qa = Array.isArray(outer.qa) ? outer.qa : Array.isArray(data.qa) ? data.qa : [];
  const known = new Set(result.turns.keys());
  for (const q of qa as Record<string, unknown>[]) {
    if (!q || typeof q.question !== 'string') continue;
    result.qa.push({
      question: q.question,
      category: typeof q.category === 'number' ? q.category : Number(q.category) || 0,
      evidence: normaliseEvidence(q.evidence, known),
    });
  }
  return result;
}
