// What a parsed import would bring in, said before anything is stored: "412 conversations, 38,120
// messages, from 2023-04 to 2026-11". Pure: counts and dates from the ParseResult alone (whether
// some of it is here already is the importer's question, asked of the database).
import type { ImportFormat, ImportedCard, ParseResult } from './types.js';

export interface ImportSummary {
  format: ImportFormat;
  /** Conversations with at least one message (empty ones are not stored). */
  conversations: number;
  /** Messages of their main lines. */
  messages: number;
  /** Earlier versions kept beside them (regenerations, edits, other swipes). */
  versions: number;
  /** The earliest and latest message dates (ISO 8601), null when no message has one. */
  from: string | null;
  to: string | null;
  /** Messages without a date: stored with the date of the message before them. */
  undated: number;
  /** A character card, for review: stored only when the person confirms. */
  card?: ImportedCard;
  warnings: string[];
}

/** The conversations an import stores: those with at least one message. */
export function storedConversations(result: ParseResult): ParseResult['conversations'] {
  return result.conversations.filter((c) => c.messages.length > 0);
}

export function summarise(result: ParseResult): ImportSummary {
  let messages = 0;
  let versions = 0;
  let undated = 0;
  let from: number | null = null;
  let to: number | null = null;
  const kept = storedConversations(result);
  for (const c of kept) {
    for (const m of c.messages) {
      messages++;
      versions += m.versions?.length ?? 0;
      const at = m.at === null ? NaN : Date.parse(m.at);
      if (Number.isNaN(at)) {
        undated++;
        continue;
      }
      if (from === null || at < from) from = at;
      if (to === null || at > to) to = at;
    }
  }
  const warnings = [...result.warnings];
  const empty = result.conversations.length - kept.length;
  if (empty > 0) warnings.push(`${empty} conversation${empty === 1 ? ' has' : 's have'} no messages and will not be imported.`);
  const summary: ImportSummary = {
    format: result.format,
    conversations: kept.length,
    messages,
    versions,
    from: from === null ? null : new Date(from).toISOString(),
    to: to === null ? null : new Date(to).toISOString(),
    undated,
    warnings,
  };
  if (result.card) summary.card = result.card;
  return summary;
}

const count = (n: number, one: string, many: string) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

/** The summary in one English line (the CLI's; the window says it in the person's language). */
export function describeSummary(s: Pick<ImportSummary, 'conversations' | 'messages' | 'versions' | 'from' | 'to' | 'card'>): string {
  if (s.card && s.conversations === 0) return `a character card: ${s.card.name}`;
  const parts = [count(s.conversations, 'conversation', 'conversations'), count(s.messages, 'message', 'messages')];
  if (s.versions) parts.push(`${count(s.versions, 'earlier version', 'earlier versions')} kept`);
  const month = (iso: string) => iso.slice(0, 7);
  const span = s.from && s.to ? (month(s.from) === month(s.to) ? `, in ${month(s.from)}` : `, from ${month(s.from)} to ${month(s.to)}`) : '';
  return `${parts.join(', ')}${span}`;
}

/**
 * What an import did, in one English line: "2 conversations and 30 messages stored; 3 conversations
 * have new messages (41); 1 was already here".
 */
export function describeApplied(p: { imported: number; messages: number; already: number; grown?: number; added?: number; diverged?: number }): string {
  const grown = p.grown ?? 0;
  const added = p.added ?? 0;
  const parts: string[] = [];
  if (p.imported || !grown) parts.push(`${count(p.imported, 'conversation', 'conversations')} and ${count(p.messages - added, 'message', 'messages')} stored`);
  if (grown) parts.push(`${count(grown, 'conversation has', 'conversations have')} new messages (${added.toLocaleString('en-US')})`);
  const already = p.already - (p.diverged ?? 0);
  if (already > 0) parts.push(`${count(already, 'was', 'were')} already here`);
  if (p.diverged) parts.push(`${count(p.diverged, 'was', 'were')} kept as it is here (told differently in the file)`);
  return parts.join('; ');
}
