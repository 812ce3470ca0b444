// Open WebUI chats: the "export all chats" list [{ id, title, chat: {…}, created_at, updated_at }] or
// one chat object as stored in webui.db's `chat` column ({ id, title, history, messages, timestamp }).
// The conversation is the tree in history.messages (parentId / childrenIds), followed from the root
// to history.currentId; other branches at a point become versions. Message timestamps are seconds,
// the chat's own `timestamp` milliseconds, the wrapper's created_at/updated_at seconds: each is read
// by its size (context.ts fromEpoch), so a build that switches units still reads right.
// Assistant content may embed reasoning and tool calls as <details type="…"> HTML: reasoning is
// dropped (like a model's thinking elsewhere), tool calls become notes.
import type { ImportedConversation, ImportedMessage } from '../types.js';
import { IdSet, isRecord, preview, str, type ParseContext } from '../context.js';
import { buildTree, deepestLeaf, pathTo, siblingsOf, subtreeSize, type TreeNode } from './tree.js';

function chatOf(value: unknown): Record<string, unknown> | null {
  if (!isRecord(value)) return null;
  if (isRecord(value.chat) && isRecord(value.chat.history)) return value.chat;
  if (isRecord(value.history) && isRecord(value.history.messages)) return value;
  return null;
}

/** True for an Open WebUI chat (wrapped in the export list's item, or bare). */
export function isOpenWebUiChat(value: unknown): boolean {
  return chatOf(value) !== null;
}

const DETAILS = /<details\b([^>]*)>([\s\S]*?)<\/details>/gi;

export function parseOpenWebUi(data: unknown, ctx: ParseContext): ImportedConversation[] {
  const items = Array.isArray(data) ? data : [data];
  const ids = new IdSet(ctx, 'conversation');
  let abandoned = 0;
  const out = items.map((item, index): ImportedConversation => {
    const where = `conversation ${index + 1}`;
    const chat = chatOf(item);
    if (!chat || !isRecord(item)) return ctx.fail('wrong_shape', `${where} is not an Open WebUI chat (it has no "history" of messages).`);
    const sourceId = str(item.id) || str(chat.id) || null;
    ids.add(sourceId, where);
    const history = chat.history as Record<string, unknown>;
    const raw = isRecord(history.messages) ? history.messages : {};
    const messageIds = new IdSet(ctx, `message (in ${where})`);
    const tree = buildTree(
      Object.entries(raw).map(([key, m]): TreeNode<Record<string, unknown>> => {
        if (!isRecord(m)) return ctx.fail('wrong_shape', `${where}: the message "${key}" is not an object.`);
        messageIds.add(str(m.id) || key, where);
        return { id: key, parent: str(m.parentId) || null, value: m };
      }),
    );
    const current = str(history.currentId);
    const end = tree.nodes.has(current) ? current : deepestLeaf(tree);
    const path = end === null ? [] : pathTo(tree, end, (id) => ctx.fail('wrong_shape', `${where}: the message tree loops back on itself at "${id}".`));
    const messages: ImportedMessage[] = [];
    for (const id of path) {
      const message = readMessage(tree.nodes.get(id)!.value, ctx);
      if (!message) continue;
      const versions: string[] = [];
      for (const sib of siblingsOf(tree, id)) {
        const other = readMessage(tree.nodes.get(sib)!.value, ctx);
        if (other && other.role === message.role && other.text !== '') {
          versions.push(other.text);
          abandoned += subtreeSize(tree, sib) - 1;
        } else {
          abandoned += subtreeSize(tree, sib);
        }
      }
      if (versions.length > 0) message.versions = versions;
      if (message.text !== '' || message.notes || message.versions) messages.push(message);
    }
    const chatAt = ctx.fromEpoch(chat.timestamp);
    return {
      sourceId,
      title: ctx.text(str(item.title) || str(chat.title)).trim(),
      createdAt: ctx.fromEpoch(item.created_at) ?? chatAt,
      updatedAt: ctx.fromEpoch(item.updated_at) ?? messages.at(-1)?.at ?? chatAt,
      messages,
    };
  });
  if (abandoned > 0) ctx.warn(`${abandoned} message${abandoned === 1 ? '' : 's'} on abandoned branches ${abandoned === 1 ? 'was' : 'were'} not imported.`);
  return out;
}

function readMessage(m: Record<string, unknown>, ctx: ParseContext): ImportedMessage | null {
  const role = str(m.role);
  if (role !== 'user' && role !== 'assistant') return null;
  const notes: string[] = [];
  const text = str(m.content).replace(DETAILS, (_all, attrs: string, inner: string) => {
    if (/type="tool_calls"/i.test(attrs)) notes.push(`Tool calls: ${preview(inner.replace(/<[^>]+>/g, ' '))}`);
    return '';
  });
  const message: ImportedMessage = { role, text: ctx.text(text).trim(), at: ctx.fromEpoch(m.timestamp) };
  const model = str(m.modelName) || str(m.model);
  if (role === 'assistant' && model !== '') message.model = ctx.text(model);
  for (const f of Array.isArray(m.files) ? m.files.filter(isRecord) : [])
    notes.push(`File: ${str(f.name) || str(isRecord(f.file) ? f.file.filename : '') || 'a file with no name'}`);
  if (notes.length > 0) message.notes = notes.map((n) => ctx.text(n));
  return message;
}
