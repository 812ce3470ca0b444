// Test helper: a real ChatGPT export (../shared/fixtures/imports/chatgpt/) carried further the way
// ChatGPT itself would — new nodes added to a copy of the conversation's `mapping` after its
// `current_node`, each a clone of a real node of the same role (every key the export has), with its
// own id, time and text, and `current_node` moved to the last. What a person gets when they go on
// chatting in ChatGPT and export again.
import fs from 'node:fs';
import path from 'node:path';

export const CHATGPT_FIXTURES = path.resolve(import.meta.dirname, '..', '..', '..', '..', 'shared', 'fixtures', 'imports', 'chatgpt');

type Json = Record<string, unknown>;
interface Node {
  id: string;
  message: Json | null;
  parent: string | null;
  children: string[];
}

/** The conversations of a real fixture (a single-conversation file as a list of one), deep-copied. */
export function readChatGpt(file: string): Json[] {
  const data = JSON.parse(fs.readFileSync(path.join(CHATGPT_FIXTURES, file), 'utf8')) as unknown;
  return Array.isArray(data) ? (data as Json[]) : [data as Json];
}

export interface Turn {
  role: 'user' | 'assistant';
  text: string;
  at: Date;
}

/** A real text node of this role on the conversation's main line, to clone. */
function templateOf(mapping: Record<string, Node>, current: string, role: Turn['role']): Node {
  for (let id: string | null = current; id; id = mapping[id]?.parent ?? null) {
    const node = mapping[id]!;
    const m = node.message as { author?: { role?: string }; content?: { content_type?: string; parts?: unknown[] }; recipient?: string } | null;
    if (
      m?.author?.role === role &&
      m.content?.content_type === 'text' &&
      typeof m.content.parts?.[0] === 'string' &&
      m.content.parts[0] !== '' &&
      (m.recipient ?? 'all') === 'all'
    )
      return node;
  }
  throw new Error(`no ${role} text node to clone`);
}

/** A copy of `conversation` with `turns` added after its current node (or at `after`: a new branch there). */
export function addTurns(conversation: Json, turns: Turn[], opts: { after?: string; tag?: string } = {}): Json {
  const conv = structuredClone(conversation) as Json & { mapping: Record<string, Node>; current_node: string; update_time: number; id: string };
  let parent = opts.after ?? conv.current_node;
  const tag = opts.tag ?? 'grown';
  let n = 0;
  for (const turn of turns) {
    const template = templateOf(conv.mapping, conv.current_node, turn.role);
    const id = `${conv.id.slice(0, 8)}-${tag}-${String(++n).padStart(4, '0')}-0000-000000000000`;
    const message = structuredClone(template.message!) as Json & { content: { parts: unknown[] }; metadata: Json };
    message.id = id;
    message.create_time = turn.at.getTime() / 1000;
    message.update_time = null;
    message.content = { ...message.content, parts: [turn.text] };
    delete message.metadata.request_id;
    conv.mapping[id] = { id, message, parent, children: [] };
    conv.mapping[parent]!.children.push(id);
    parent = id;
  }
  conv.current_node = parent;
  conv.update_time = Math.max(conv.update_time ?? 0, turns.at(-1)!.at.getTime() / 1000);
  return conv;
}

/** The id of the node `back` steps up the main line from the current node (0: the current node). */
export function mainLineNode(conversation: Json, back: number): string {
  const conv = conversation as { mapping: Record<string, Node>; current_node: string };
  let id = conv.current_node;
  for (let i = 0; i < back; i++) id = conv.mapping[id]!.parent!;
  return id;
}

/** The bytes of an export holding these conversations (ChatGPT writes an array). */
export function exportBytes(conversations: Json[]): Buffer {
  return Buffer.from(JSON.stringify(conversations, null, 2));
}
