// LibreChat's conversation export: { conversationId, title, options, messages } where messages is
// either a flat list with parentMessageId links or (recursive: true) one root whose replies nest in
// `children`. There is no "current message" marker: the main line is the longest branch (ties: the
// later one), and other branches at a point become versions. `sender` is a display label (the
// preset's name), so the role comes from isCreatedByUser; the label is kept as the speaker.
import type { ImportedConversation, ImportedMessage } from '../types.js';
import { IdSet, isRecord, str, type ParseContext } from '../context.js';
import { buildTree, deepestLeaf, pathTo, siblingsOf, subtreeSize, type TreeNode } from './tree.js';

export function isLibreChatExport(value: unknown): boolean {
  return isRecord(value) && typeof value.conversationId === 'string' && Array.isArray(value.messages);
}

export function parseLibreChat(data: unknown, ctx: ParseContext): ImportedConversation[] {
  const conv = data as Record<string, unknown>;
  const ids = new IdSet(ctx, 'message');
  const flat: TreeNode<Record<string, unknown>>[] = [];
  const visit = (m: unknown, parent: string | null, depth: number): void => {
    if (!isRecord(m)) return ctx.fail('wrong_shape', `a message in the conversation is not an object.`);
    if (depth > 10_000) return ctx.fail('wrong_shape', 'the messages nest deeper than any conversation does.');
    const id = str(m.messageId);
    if (id === '') return ctx.fail('wrong_shape', 'a message has no messageId.');
    ids.add(id, 'the conversation');
    flat.push({ id, parent: parent ?? (str(m.parentMessageId) || null), value: m });
    for (const child of Array.isArray(m.children) ? m.children : []) visit(child, id, depth + 1);
  };
  for (const m of conv.messages as unknown[]) visit(m, null, 0);
  const tree = buildTree(flat);
  const end = deepestLeaf(tree);
  const path = end === null ? [] : pathTo(tree, end, (id) => ctx.fail('wrong_shape', `the message tree loops back on itself at "${id}".`));
  let abandoned = 0;
  const messages: ImportedMessage[] = [];
  for (const id of path) {
    const message = readMessage(tree.nodes.get(id)!.value, ctx);
    const versions: string[] = [];
    for (const sib of siblingsOf(tree, id)) {
      const other = readMessage(tree.nodes.get(sib)!.value, ctx);
      if (other.role === message.role && other.text !== '') {
        versions.push(other.text);
        abandoned += subtreeSize(tree, sib) - 1;
      } else {
        abandoned += subtreeSize(tree, sib);
      }
    }
    if (versions.length > 0) message.versions = versions;
    if (message.text !== '' || message.versions) messages.push(message);
  }
  if (abandoned > 0) ctx.warn(`${abandoned} message${abandoned === 1 ? '' : 's'} on abandoned branches ${abandoned === 1 ? 'was' : 'were'} not imported.`);
  const dates = messages.map((m) => m.at).filter((d): d is string => d !== null);
  return [
    {
      sourceId: str(conv.conversationId) || null,
      title: ctx.text(conv.title).trim(),
      createdAt: dates[0] ?? null,
      updatedAt: dates.at(-1) ?? null,
      messages,
    },
  ];
}

function readMessage(m: Record<string, unknown>, ctx: ParseContext): ImportedMessage {
  const user = m.isCreatedByUser === true;
  const message: ImportedMessage = { role: user ? 'user' : 'assistant', text: ctx.text(m.text).trim(), at: ctx.fromIso(m.createdAt) };
  const speaker = ctx.text(m.sender).trim();
  if (speaker !== '' && !(user && speaker === 'User')) message.speaker = speaker;
  if (!user && str(m.model) !== '') message.model = ctx.text(m.model);
  return message;
}
