// SillyTavern chat files (.jsonl): a header line, then one message per line.
//
// Headers come in three generations — { user_name, character_name, create_date } (2023, epoch ms),
// the same plus chat_metadata (2025, "2025-03-25@21h19m28s"), and { chat_metadata, user_name:
// "unused", character_name: "unused" } (2026). "unused" is no name: names come from the lines.
//
// send_date comes as epoch ms (2023), a locale string with no zone ("March 25, 2025 9:19pm", 2025)
// or ISO (2026). A zone-less date is read in the writer's time zone when the file reveals it (a
// bot reply's gen_started is ISO UTC, written a moment around its send_date), otherwise in this
// machine's local time; either way the warnings say so.
//
// Swipes: the chosen text is `mes` (== swipes[swipe_id]); the other swipes become versions, in
// their order. Empty lines (a failed generation: mes "" and swipes [""]) are skipped and counted.
import type { ImportedConversation, ImportedMessage } from '../types.js';
import { isRecord, str, type ParseContext } from '../context.js';

const UNUSED = 'unused';
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/** The lines of a .jsonl file parsed, or null when the text is not JSON Lines of objects. Throws nothing. */
export function jsonLines(text: string): Record<string, unknown>[] | null {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  if (lines.length === 0) return null;
  const out: Record<string, unknown>[] = [];
  for (const line of lines) {
    try {
      const value: unknown = JSON.parse(line);
      if (!isRecord(value)) return null;
      out.push(value);
    } catch {
      return null;
    }
  }
  return out;
}

/** True for a first line that is a SillyTavern header or message. */
export function isSillyTavernLine(line: Record<string, unknown>): boolean {
  return 'mes' in line || 'character_name' in line || ('user_name' in line && 'chat_metadata' in line);
}

/** A zone-less wall-clock time, as its fields. */
interface WallClock {
  y: number;
  mo: number;
  d: number;
  h: number;
  mi: number;
  s: number;
}

/** "March 25, 2025 9:19pm", "2025-03-25@21h19m28s", "2023-5-12 @21h 32m 29s 228ms" → fields; null for anything else. */
export function parseWallClock(value: string): WallClock | null {
  const locale = /^([A-Za-z]+)\s+(\d{1,2}),\s*(\d{4})\s+(\d{1,2}):(\d{2})(?::(\d{2}))?\s*(am|pm)?$/i.exec(value.trim());
  if (locale) {
    const mo = MONTHS.findIndex((m) => m.startsWith(locale[1]!.toLowerCase()) && locale[1]!.length >= 3);
    if (mo < 0) return null;
    let h = Number(locale[4]);
    const ampm = locale[7]?.toLowerCase();
    if (ampm === 'pm' && h < 12) h += 12;
    if (ampm === 'am' && h === 12) h = 0;
    return { y: Number(locale[3]), mo, d: Number(locale[2]), h, mi: Number(locale[5]), s: Number(locale[6] ?? 0) };
  }
  const st = /^(\d{4})-(\d{1,2})-(\d{1,2})\s*@\s*(\d{1,2})h\s*(\d{1,2})m\s*(\d{1,2})s/.exec(value.trim());
  if (st) return { y: Number(st[1]), mo: Number(st[2]) - 1, d: Number(st[3]), h: Number(st[4]), mi: Number(st[5]), s: Number(st[6]) };
  return null;
}

export function parseSillyTavern(lines: Record<string, unknown>[], fileName: string, ctx: ParseContext): ImportedConversation[] {
  const header = lines[0] && !('mes' in lines[0]) ? lines[0] : null;
  const rows = header ? lines.slice(1) : lines;
  rows.forEach((row, i) => {
    if (!('mes' in row) || typeof row.mes !== 'string')
      ctx.fail('wrong_shape', `line ${i + (header ? 2 : 1)} is not a SillyTavern message (it has no "mes" text).`);
  });

  // The writer's UTC offset, if a reply carries both its zone-less send_date and an ISO gen_started.
  const offset = writerOffsetMinutes(rows);
  let zoneless = 0;
  const when = (value: unknown): string | null => {
    if (typeof value === 'number') return ctx.fromMillis(value);
    if (typeof value !== 'string') return null;
    if (/^\d{4}-\d{2}-\d{2}T/.test(value.trim())) return ctx.fromIso(value);
    const wall = parseWallClock(value);
    if (!wall) return value.trim() === '' ? null : ctx.unreadableDate(value);
    zoneless++;
    const ms =
      offset === null
        ? new Date(wall.y, wall.mo, wall.d, wall.h, wall.mi, wall.s).getTime()
        : Date.UTC(wall.y, wall.mo, wall.d, wall.h, wall.mi, wall.s) - offset * 60_000;
    return ctx.moment(ms);
  };

  const named = (value: unknown): string | undefined => {
    const name = ctx.text(value).trim();
    return name === '' || name === UNUSED ? undefined : name;
  };
  let character = named(header?.character_name);
  let skipped = 0;
  let system = 0;
  const messages: ImportedMessage[] = [];
  for (const row of rows) {
    const isUser = row.is_user === true;
    const extra = isRecord(row.extra) ? row.extra : {};
    // SillyTavern's own notices (help text, narrator lines): not the conversation.
    if (row.is_system === true && typeof extra.type === 'string') {
      system++;
      continue;
    }
    const speaker = named(row.name);
    if (!isUser && speaker) character ??= speaker;
    const text = ctx.text(row.mes).trim();
    const message: ImportedMessage = { role: isUser ? 'user' : 'assistant', text, at: when(row.send_date) };
    if (speaker) message.speaker = speaker;
    const swipes = Array.isArray(row.swipes) ? row.swipes.map((s) => ctx.text(s).trim()) : [];
    if (swipes.length > 1) {
      const chosen = typeof row.swipe_id === 'number' && swipes[row.swipe_id] === text ? row.swipe_id : swipes.indexOf(text);
      const versions = swipes.filter((s, i) => i !== chosen && s !== '');
      if (versions.length > 0) message.versions = versions;
    }
    const info = Array.isArray(row.swipe_info) && typeof row.swipe_id === 'number' ? row.swipe_info[row.swipe_id] : undefined;
    const model = str(extra.model) || (isRecord(info) && isRecord(info.extra) ? str(info.extra.model) : '');
    if (!isUser && model !== '') message.model = ctx.text(model);
    if (message.text === '' && !message.versions) {
      skipped++;
      continue;
    }
    messages.push(message);
  }
  if (skipped > 0) ctx.warn(`${skipped} empty message${skipped === 1 ? ' (a failed reply) was' : 's (failed replies) were'} skipped.`);
  if (system > 0) ctx.warn(`${system} SillyTavern system notice${system === 1 ? ' was' : 's were'} skipped.`);
  const createdAt = header && header.create_date !== undefined ? when(header.create_date) : (messages[0]?.at ?? null);
  if (zoneless > 0) {
    ctx.warn(
      offset === null
        ? `The dates in this chat have no time zone; they were read as this computer's local time.`
        : `The dates in this chat have no time zone; they were read as UTC${formatOffset(offset)}, the zone the generation times in the file show.`,
    );
  }
  return [
    {
      sourceId: chatId(header),
      title: character ?? fileName.replace(/\.jsonl$/i, ''),
      createdAt,
      updatedAt: messages.reduce<string | null>((latest, m) => (m.at !== null && (latest === null || m.at > latest) ? m.at : latest), null),
      messages,
    },
  ];
}

/** Minutes east of UTC, rounded to a quarter hour, from a reply's zone-less send_date and its ISO gen_started; null when no line shows it or lines disagree. */
function writerOffsetMinutes(rows: Record<string, unknown>[]): number | null {
  const seen = new Set<number>();
  for (const row of rows) {
    if (typeof row.send_date !== 'string' || typeof row.gen_started !== 'string') continue;
    const wall = parseWallClock(row.send_date);
    const started = Date.parse(row.gen_started);
    if (!wall || !Number.isFinite(started)) continue;
    const asUtc = Date.UTC(wall.y, wall.mo, wall.d, wall.h, wall.mi, wall.s);
    const minutes = Math.round((asUtc - started) / 60_000 / 15) * 15;
    if (Math.abs(minutes) <= 14 * 60) seen.add(minutes);
  }
  return seen.size === 1 ? [...seen][0]! : null;
}

function formatOffset(minutes: number): string {
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/** The chat's own id: chat_metadata.integrity (2026) or chat_id_hash (2025); null for older chats. */
function chatId(header: Record<string, unknown> | null): string | null {
  const meta = isRecord(header?.chat_metadata) ? header.chat_metadata : {};
  if (typeof meta.integrity === 'string' && meta.integrity !== '') return meta.integrity;
  if (typeof meta.chat_id_hash === 'number' && Number.isSafeInteger(meta.chat_id_hash)) return String(meta.chat_id_hash);
  return null;
}
