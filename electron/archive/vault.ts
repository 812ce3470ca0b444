// The archive's human-readable half: markdown files with YAML frontmatter, one per memory (by type),
// per diary day, per dream and per conversation. Pure functions: names and text, no database.

/** A file-name-safe piece of a title: letters and digits of any script (CJK kept), others become '-'. */
export function slug(text: string | null | undefined, maxChars = 48): string {
  const cleaned = (text ?? '')
    .normalize('NFKC')
    .replace(/[^\p{L}\p{N}\p{M}]+/gu, '-')
    .replace(/^-+|-+$/g, '')
    .toLowerCase();
  const cut = [...cleaned].slice(0, maxChars).join('').replace(/-+$/, '');
  return cut || 'untitled';
}

/** A day as stored ('2026-11-03'); anything else becomes a safe stand-in, never a path. */
export function safeDay(day: string | null | undefined): string {
  return typeof day === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(day) ? day : `day-${slug(day ?? '', 20)}`;
}

/** YAML frontmatter: every value written as JSON, which YAML reads as the same value. */
export function frontmatter(fields: Record<string, unknown>): string {
  const lines = Object.entries(fields).map(([key, value]) => `${key}: ${JSON.stringify(value ?? null)}`);
  return `---\n${lines.join('\n')}\n---\n`;
}

export interface VaultMemory {
  id: number;
  type: string;
  status: string;
  content: string;
  valid_from: string | null;
  valid_to: string | null;
  superseded_by: number | null;
  pinned: boolean;
  source: string;
  reference_count: number;
  injected_count: number;
  entity_names: string[];
  created_at: string;
  updated_at: string;
  changes: number;
  references: number;
}

export const MEMORY_TYPES = ['world', 'experience', 'opinion', 'observation', 'preference', 'procedural'] as const;

export function memoryPath(m: Pick<VaultMemory, 'id' | 'type' | 'content'>): string {
  const type = (MEMORY_TYPES as readonly string[]).includes(m.type) ? m.type : 'other';
  return `vault/memories/${type}/${m.id}-${slug(m.content, 40)}.md`;
}

export function memoryFile(m: VaultMemory): string {
  return `${frontmatter({
    id: m.id,
    type: m.type,
    status: m.status,
    valid_from: m.valid_from,
    valid_to: m.valid_to,
    superseded_by: m.superseded_by,
    pinned: m.pinned,
    source: m.source,
    entities: m.entity_names,
    references: m.references,
    reference_count: m.reference_count,
    injected_count: m.injected_count,
    changes: m.changes,
    created_at: m.created_at,
    updated_at: m.updated_at,
  })}\n${m.content}\n`;
}

export interface VaultDiaryBlock {
  id: number;
  day: string;
  kind: string;
  title: string | null;
  body: string;
  mood: unknown;
  conversation_id: string | null;
  created_at: string;
}

const KIND_HEADINGS: Record<string, string> = { anchor: 'Anchors', imprint: 'Imprints', narrative: 'Narrative', digest: 'Digest' };
const KIND_ORDER = ['narrative', 'anchor', 'imprint', 'digest'];

export function diaryDayPath(day: string): string {
  return `vault/diary/${safeDay(day)}.md`;
}

/** One diary day: its narrative, anchors, imprints and digest, in that order. */
export function diaryDayFile(day: string, blocks: VaultDiaryBlock[]): string {
  const counts = Object.fromEntries(KIND_ORDER.map((k) => [k, blocks.filter((b) => b.kind === k).length]));
  const parts = [frontmatter({ day, blocks: blocks.length, ...counts }), `\n# ${day}\n`];
  for (const kind of [...KIND_ORDER, ...new Set(blocks.map((b) => b.kind).filter((k) => !KIND_ORDER.includes(k)))]) {
    const ofKind = blocks.filter((b) => b.kind === kind);
    if (!ofKind.length) continue;
    parts.push(`\n## ${KIND_HEADINGS[kind] ?? kind}\n`);
    for (const b of ofKind) {
      parts.push(`\n### ${b.title?.trim() || `${kind} ${b.id}`}\n<!-- id: ${b.id}${b.mood ? `, mood: ${JSON.stringify(b.mood)}` : ''} -->\n\n${b.body}\n`);
    }
  }
  return parts.join('');
}

export function dreamPath(b: Pick<VaultDiaryBlock, 'id' | 'day' | 'title'>): string {
  return `vault/dreams/${safeDay(b.day)}-${b.id}-${slug(b.title, 40)}.md`;
}

export function dreamFile(b: VaultDiaryBlock): string {
  return `${frontmatter({ id: b.id, day: b.day, title: b.title, created_at: b.created_at })}\n# ${b.title?.trim() || `Dream of ${b.day}`}\n\n${b.body}\n`;
}

export interface VaultConversation {
  id: string;
  kind: string;
  title: string;
  archived: boolean;
  created_at: string;
  updated_at: string;
  messages: number;
}

export function conversationPath(c: Pick<VaultConversation, 'id' | 'title' | 'created_at'>): string {
  const day = safeDay(String(c.created_at).slice(0, 10));
  return `vault/conversations/${day}-${slug(c.title, 40)}-${slug(c.id, 12)}.md`;
}

export function conversationHeader(c: VaultConversation): string {
  return `${frontmatter({ id: c.id, title: c.title, kind: c.kind, archived: c.archived, messages: c.messages, created_at: c.created_at, updated_at: c.updated_at })}\n# ${c.title}\n`;
}

export interface VaultMessage {
  id: string;
  role: string;
  speaker: string | null;
  content: string;
  status: string;
  created_at: string;
}

/** A message in the vault, headed by who said it: its speaker, else "You" or the companion's name. */
export function messageSection(m: VaultMessage, companion = 'Anima'): string {
  const who = m.speaker?.trim() || (m.role === 'user' ? 'You' : companion);
  const note = m.status === 'complete' ? '' : ` (${m.status})`;
  return `\n### ${who} · ${String(m.created_at).slice(0, 16).replace('T', ' ')}${note}\n\n${m.content}\n`;
}

export function selfFile(blocks: { key: string; content: string; is_default: boolean; updated_at: string }[]): string {
  const parts = [frontmatter({ blocks: blocks.length }), '\n# Self\n'];
  for (const b of blocks) parts.push(`\n## ${b.key}\n\n${b.content}\n`);
  return parts.join('');
}

export const VAULT_README = `# Anima vault

A readable copy of what Anima keeps, written when this archive was made.

- memories/<type>/ — one file per memory; the frontmatter holds its id, type, status
  (active, superseded, expired), valid time and how often it was cited and recalled.
- diary/ — one file per diary day: the narrative, anchors, imprints and digest.
- dreams/ — one file per dream.
- conversations/ — one file per conversation, the current version of each message.
- self.md — the companion's self layer.

Everything, with earlier versions of messages and the journal of every memory change, is in
anima.json beside this folder; anima.sql is the database as SQL.
`;
