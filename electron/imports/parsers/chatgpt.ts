// ChatGPT's data export, conversations.json: an array of conversations (or, cut out of one, a single
// conversation object), each a `mapping` tree of nodes { id, message, parent, children }.
//
// - The main line is found by walking `parent` up from `current_node` (walking children[0] down picks
//   the wrong branch). Without a usable current_node, the newest leaf is taken, with a warning.
// - At a branch point on the main line, each other branch's first message (an edited question, a
//   regenerated answer, also when the branch starts with a tool call) becomes a `version` of the next
//   main-line message of the same role, oldest first. What followed inside an abandoned branch is not
//   imported; the warnings say how many messages that was.
// - Skipped: the root (message null), system nodes, visually hidden nodes, custom instructions
//   (`user_editable_context`, which carries role "user"), reasoning (`thoughts`, `reasoning_recap`),
//   empty nodes (parts [""]), and conversations with no message left (no `mapping` at all, or only
//   hidden nodes), counted in the warnings.
// - Tool calls (assistant `code` with a recipient), tool output (role "tool"), images and other
//   non-text parts are kept as short notes on the assistant reply they belong to.
// - Citation markers (【6†source】, the private-use cite markers of newer exports) are removed.
import type { ImportedConversation, ImportedMessage } from '../types.js';
import { IdSet, isRecord, preview, str, type ParseContext } from '../context.js';

interface Node {
  id: string;
  message: Record<string, unknown> | null;
  parent: string | null;
  children: string[];
}

/** True for a value that looks like one ChatGPT conversation. */
export function isChatGptConversation(value: unknown): boolean {
  return isRecord(value) && isRecord(value.mapping);
}

const CITATION = /【\d+(?::\d+)?(?:†[^】]*)?】|\uE200[^\uE201]*\uE201/g;

export function parseChatGpt(data: unknown, ctx: ParseContext): ImportedConversation[] {
  const items = Array.isArray(data) ? data : [data];
  const ids = new IdSet(ctx, 'conversation');
  const out: ImportedConversation[] = [];
  let abandoned = 0;
  let emptySkipped = 0;
  let emptyConversations = 0;
  items.forEach((item, index) => {
    const where = `conversation ${index + 1}`;
    if (!isChatGptConversation(item)) {
      // Newer exports list some conversations (e.g. ones still being written) with their id and title but no messages.
      if (
        isRecord(item) &&
        typeof item.title === 'string' &&
        (typeof item.conversation_id === 'string' || typeof item.id === 'string') &&
        item.mapping == null
      ) {
        ids.add(str(item.conversation_id) || str(item.id), where);
        emptyConversations++;
        return;
      }
      ctx.fail('wrong_shape', `${where} is not a ChatGPT conversation (it has no "mapping").`);
    }
    const conv = item as Record<string, unknown>;
    const sourceId = str(conv.conversation_id) || str(conv.id) || null;
    ids.add(sourceId, where);
    const nodes = readNodes(conv.mapping as Record<string, unknown>, where, ctx);
    const path = mainLine(nodes, str(conv.current_node), where, ctx);
    const onPath = new Set(path);
    const messages: ImportedMessage[] = [];
    let pendingNotes: string[] = [];
    // Earlier versions found at a branch point, waiting for the next message on the main line.
    let pendingVersions: Version[] = [];
    for (const id of path) {
      const node = nodes.get(id)!;
      // Other branches at this point (an edited question, a regenerated answer — also when the branch
      // starts at a tool call): each one's first message is an earlier version of the next message of
      // the same role on the main line; what followed inside it is counted, not imported.
      const parent = node.parent === null ? undefined : nodes.get(node.parent);
      for (const c of parent?.children ?? []) {
        const sib = c === id || onPath.has(c) ? undefined : nodes.get(c);
        if (!sib) continue;
        const first = firstVisible(nodes, sib, ctx);
        const total = countVisible(nodes, sib.id, ctx);
        if (first) pendingVersions.push(first);
        abandoned += first ? total - 1 : total;
      }
      const turn = readTurn(node, ctx);
      if (turn === null) continue;
      if (turn.kind === 'note') {
        pendingNotes.push(...turn.notes);
        continue;
      }
      const msg = turn.message;
      if (msg.role === 'user' && pendingNotes.length > 0) {
        // Tool traffic with no answer after it: keep it on an empty reply rather than lose it.
        messages.push({ role: 'assistant', text: '', at: messages.at(-1)?.at ?? null, notes: pendingNotes });
        pendingNotes = [];
      }
      if (msg.role === 'assistant' && pendingNotes.length > 0) {
        msg.notes = [...pendingNotes, ...(msg.notes ?? [])];
        pendingNotes = [];
      }
      if (msg.text === '' && !msg.notes?.length) {
        emptySkipped++;
        continue;
      }
      const versions = pendingVersions.filter((v) => v.role === msg.role);
      abandoned += pendingVersions.length - versions.length;
      pendingVersions = [];
      if (versions.length > 0) msg.versions = versions.sort((a, b) => a.t - b.t).map((v) => v.text);
      messages.push(msg);
    }
    abandoned += pendingVersions.length;
    if (pendingNotes.length > 0) {
      const last = messages.at(-1);
      messages.push({ role: 'assistant', text: '', at: last?.at ?? null, notes: pendingNotes });
    }
    if (messages.length === 0) {
      emptyConversations++;
      return;
    }
    out.push({
      sourceId,
      title: ctx.text(conv.title).trim(),
      createdAt: ctx.fromSeconds(conv.create_time),
      updatedAt: ctx.fromSeconds(conv.update_time),
      messages,
    });
  });
  if (abandoned > 0) {
    ctx.warn(
      `${abandoned} message${abandoned === 1 ? '' : 's'} on abandoned branches (after an edited question or a regenerated answer) ${abandoned === 1 ? 'was' : 'were'} not imported; the edited or regenerated message itself is kept as an earlier version.`,
    );
  }
  if (emptyConversations > 0)
    ctx.warn(
      `${emptyConversations} conversation${emptyConversations === 1 ? '' : 's'} without any messages ${emptyConversations === 1 ? 'was' : 'were'} skipped.`,
    );
  if (emptySkipped > 0) ctx.warn(`${emptySkipped} empty message${emptySkipped === 1 ? ' was' : 's were'} skipped.`);
  return out;
}

function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

function readNodes(mapping: Record<string, unknown>, where: string, ctx: ParseContext): Map<string, Node> {
  const nodes = new Map<string, Node>();
  const messageIds = new IdSet(ctx, `message (in ${where})`);
  for (const [key, raw] of Object.entries(mapping)) {
    if (!isRecord(raw)) ctx.fail('wrong_shape', `${where}: the node "${key}" is not an object.`);
    if (raw.id !== undefined && raw.id !== key) ctx.fail('wrong_shape', `${where}: the node filed under "${key}" says its id is "${String(raw.id)}".`);
    const message = raw.message;
    if (message !== null && message !== undefined && !isRecord(message))
      ctx.fail('wrong_shape', `${where}: the node "${key}" has a message that is not an object.`);
    if (isRecord(message)) messageIds.add(str(message.id), `node "${key}"`);
    const parent = typeof raw.parent === 'string' ? raw.parent : null;
    const children = Array.isArray(raw.children) ? raw.children.filter((c): c is string => typeof c === 'string') : [];
    nodes.set(key, { id: key, message: isRecord(message) ? message : null, parent, children });
  }
  // Children lists are repaired from parent links (a trimmed export may lack them).
  for (const node of nodes.values()) {
    const parent = node.parent === null ? undefined : nodes.get(node.parent);
    if (parent && !parent.children.includes(node.id)) parent.children.push(node.id);
  }
  return nodes;
}

/** The node ids from the root down to current_node (or the newest leaf). */
function mainLine(nodes: Map<string, Node>, current: string, where: string, ctx: ParseContext): string[] {
  let end = current;
  if (!nodes.has(end)) {
    let best: Node | undefined;
    for (const node of nodes.values()) {
      if (node.children.some((c) => nodes.has(c))) continue;
      if (!best || num(node.message?.create_time) > num(best.message?.create_time)) best = node;
    }
    if (!best) return [];
    if (nodes.size > 1) ctx.warn(`${where}: no current message is marked; the newest branch was followed.`);
    end = best.id;
  }
  const path: string[] = [];
  const seen = new Set<string>();
  for (let id: string | null = end; id !== null && nodes.has(id); id = nodes.get(id)!.parent) {
    if (seen.has(id)) ctx.fail('wrong_shape', `${where}: the message tree loops back on itself at "${id}".`);
    seen.add(id);
    path.push(id);
  }
  return path.reverse();
}

interface Version {
  role: 'user' | 'assistant';
  text: string;
  t: number;
}

/** The first message with text down a branch (following its newest child at each step); null when it has none. */
function firstVisible(nodes: Map<string, Node>, start: Node, ctx: ParseContext): Version | null {
  const seen = new Set<string>();
  for (let node: Node | undefined = start; node && !seen.has(node.id);) {
    seen.add(node.id);
    const turn = readTurn(node, ctx);
    if (turn?.kind === 'message' && turn.message.text !== '') return { role: turn.message.role, text: turn.message.text, t: num(node.message?.create_time) };
    let newest: Node | undefined;
    for (const c of node.children) {
      const child: Node | undefined = nodes.get(c);
      if (child && (!newest || num(child.message?.create_time) >= num(newest.message?.create_time))) newest = child;
    }
    node = newest;
  }
  return null;
}

/** Messages a person would see in the subtree under id (the node itself included). */
function countVisible(nodes: Map<string, Node>, id: string, ctx: ParseContext): number {
  let count = 0;
  const stack = [id];
  const seen = new Set<string>();
  while (stack.length > 0) {
    const at = stack.pop()!;
    if (seen.has(at)) continue;
    seen.add(at);
    const node = nodes.get(at);
    if (!node) continue;
    const turn = readTurn(node, ctx);
    if (turn?.kind === 'message' && turn.message.text !== '') count++;
    stack.push(...node.children);
  }
  return count;
}

type Turn = { kind: 'message'; message: ImportedMessage } | { kind: 'note'; notes: string[] };

/** One node read: a chat message, notes for the next reply (tool traffic), or null (hidden, system, root). */
function readTurn(node: Node, ctx: ParseContext): Turn | null {
  const m = node.message;
  if (!m) return null;
  const author = isRecord(m.author) ? m.author : {};
  const role = str(author.role);
  const metadata = isRecord(m.metadata) ? m.metadata : {};
  const content = isRecord(m.content) ? m.content : {};
  const type = str(content.content_type);
  if (role === 'system' || role === '') return null;
  if (metadata.is_visually_hidden_from_conversation === true || metadata.is_user_system_message === true) return null;
  if (type === 'user_editable_context' || type === 'model_editable_context') return null;
  // The model's reasoning, like thinking elsewhere: the reply is what was said.
  if (type === 'thoughts' || type === 'reasoning_recap') return null;
  const at = ctx.fromSeconds(m.create_time);

  if (role === 'tool') {
    const name = str(author.name) || 'tool';
    return { kind: 'note', notes: [ctx.text(`Tool result (${name}): ${toolSummary(content)}`)] };
  }
  const recipient = str(m.recipient);
  if (role === 'assistant' && recipient !== '' && recipient !== 'all') {
    const call = type === 'code' ? str(content.text) : partsText(content, []);
    return { kind: 'note', notes: [ctx.text(`Tool call (${recipient}): ${preview(call)}`)] };
  }
  if (role !== 'user' && role !== 'assistant') return null;

  const notes: string[] = [];
  // The uploaded files' names, by file id (an image part names only its file-service:// pointer).
  const names = new Map<string, string>();
  for (const a of Array.isArray(metadata.attachments) ? metadata.attachments : []) {
    if (isRecord(a) && str(a.name) !== '') names.set(str(a.id), str(a.name));
  }
  let text: string;
  if (type === 'text' || type === 'multimodal_text') {
    text = partsText(content, notes, names);
  } else if (type === 'code') {
    text = '```\n' + str(content.text) + '\n```';
  } else if (typeof content.text === 'string') {
    notes.push(`${type || 'content'}: ${preview(content.text)}`);
    text = '';
  } else {
    text = partsText(content, notes, names);
    if (text === '' && notes.length === 0 && type !== '') notes.push(`A "${type}" part was not imported.`);
  }
  for (const name of names.values()) if (!notes.some((n) => n.includes(name))) notes.push(`Attachment: ${name}`);
  const message: ImportedMessage = { role, text: ctx.text(text.replace(CITATION, '')).trim(), at };
  const model = str(metadata.model_slug);
  if (role === 'assistant' && model !== '') message.model = ctx.text(model);
  if (notes.length > 0) message.notes = notes.map((n) => ctx.text(n));
  return { kind: 'message', message };
}

/** The text parts joined; non-text parts (images, audio, files) become notes. */
function partsText(content: Record<string, unknown>, notes: string[], names = new Map<string, string>()): string {
  const parts = Array.isArray(content.parts) ? content.parts : [];
  const texts: string[] = [];
  for (const part of parts) {
    if (typeof part === 'string') {
      if (part.trim() !== '') texts.push(part);
    } else if (isRecord(part)) {
      const kind = str(part.content_type);
      if (kind === 'image_asset_pointer') {
        const size = typeof part.width === 'number' && typeof part.height === 'number' ? ` (${part.width}×${part.height})` : '';
        const pointer = str(part.asset_pointer);
        const name = names.get(pointer.replace(/^[a-z-]+:\/\//, '')) ?? pointer;
        notes.push(`Image${size}: ${name || 'unnamed'} (the picture itself is not in conversations.json)`);
      } else if (typeof part.text === 'string') {
        texts.push(part.text);
      } else {
        notes.push(`A "${kind || 'unknown'}" part was not imported.`);
      }
    }
  }
  return texts.join('\n\n');
}

function toolSummary(content: Record<string, unknown>): string {
  const type = str(content.content_type);
  if (type === 'tether_quote') return preview(`${str(content.title)} ${str(content.url)}`.trim());
  if (type === 'tether_browsing_display') return preview(str(content.summary) || str(content.result));
  if (typeof content.text === 'string') return preview(content.text);
  return preview(partsText(content, []) || type);
}
