// Claude.ai's data export, conversations.json: a bare array of { uuid, name, created_at, updated_at,
// chat_messages: [{ uuid, sender: human|assistant, text, content: [blocks], attachments, files }] }.
//
// - The text is the `text` blocks joined (a newer export may leave `text` empty and keep the words
//   only in blocks); `text` is the fallback when there are no blocks. Leading/trailing space is
//   trimmed (assistant texts start with one).
// - `thinking` blocks are skipped (the reply is what was said). `tool_use` / `tool_result` become
//   notes; a "human" message that holds only tool results is the tool's answer, not the person's, so
//   its notes go onto the assistant reply before it, and a reply that was only tool calls is folded
//   into the answer that follows it. Attachments and files are kept by name as notes.
// - Messages with no text and no notes (failed replies, redacted exports) are skipped, and so are
//   conversations left with no message at all: the warnings count both, so the summary can say what
//   the file held and what was kept.
import type { ImportedConversation, ImportedMessage } from '../types.js';
import { IdSet, isRecord, preview, str, type ParseContext } from '../context.js';

/** True for a value that looks like one Claude conversation. */
export function isClaudeConversation(value: unknown): boolean {
  return isRecord(value) && Array.isArray(value.chat_messages);
}

export function parseClaude(data: unknown, ctx: ParseContext): ImportedConversation[] {
  const items = Array.isArray(data) ? data : [data];
  const conversationIds = new IdSet(ctx, 'conversation');
  const messageIds = new IdSet(ctx, 'message');
  const out: ImportedConversation[] = [];
  let emptyMessages = 0;
  let emptyConversations = 0;
  let otherSenders = 0;
  items.forEach((item, index) => {
    const where = `conversation ${index + 1}`;
    if (!isClaudeConversation(item)) ctx.fail('wrong_shape', `${where} is not a Claude conversation (it has no "chat_messages" list).`);
    const conv = item as Record<string, unknown>;
    const sourceId = str(conv.uuid) || null;
    conversationIds.add(sourceId, where);
    const messages: ImportedMessage[] = [];
    (conv.chat_messages as unknown[]).forEach((raw, mi) => {
      if (!isRecord(raw)) ctx.fail('wrong_shape', `${where}, message ${mi + 1} is not an object.`);
      messageIds.add(str(raw.uuid), `${where}, message ${mi + 1}`);
      const sender = str(raw.sender);
      if (sender !== 'human' && sender !== 'assistant') {
        otherSenders++;
        return;
      }
      const { text, notes, onlyToolResults } = readContent(raw, ctx);
      if (onlyToolResults) {
        const previous = messages.at(-1);
        if (previous?.role === 'assistant') {
          previous.notes = [...(previous.notes ?? []), ...notes];
          return;
        }
      }
      if (text === '' && notes.length === 0) {
        emptyMessages++;
        return;
      }
      const message: ImportedMessage = { role: sender === 'human' ? 'user' : 'assistant', text, at: ctx.fromIso(raw.created_at) };
      const previous = messages.at(-1);
      // A reply that was only tool calls, then the answer after their results: one reply with the calls as notes.
      if (previous?.role === 'assistant' && previous.text === '' && message.role === 'assistant') {
        messages.pop();
        notes.unshift(...(previous.notes ?? []));
      }
      if (notes.length > 0) message.notes = notes;
      messages.push(message);
    });
    if (messages.length === 0) {
      emptyConversations++;
      return;
    }
    out.push({
      sourceId,
      title: ctx.text(conv.name).trim(),
      createdAt: ctx.fromIso(conv.created_at),
      updatedAt: ctx.fromIso(conv.updated_at),
      messages,
    });
  });
  if (emptyMessages > 0) ctx.warn(`${emptyMessages} message${emptyMessages === 1 ? '' : 's'} with no text ${emptyMessages === 1 ? 'was' : 'were'} skipped.`);
  if (emptyConversations > 0) {
    ctx.warn(
      `${emptyConversations} conversation${emptyConversations === 1 ? '' : 's'} with no text in any message ${emptyConversations === 1 ? 'was' : 'were'} skipped.`,
    );
  }
  if (otherSenders > 0)
    ctx.warn(`${otherSenders} message${otherSenders === 1 ? '' : 's'} from neither the person nor Claude ${otherSenders === 1 ? 'was' : 'were'} skipped.`);
  return out;
}

function readContent(raw: Record<string, unknown>, ctx: ParseContext): { text: string; notes: string[]; onlyToolResults: boolean } {
  const blocks = Array.isArray(raw.content) ? raw.content.filter(isRecord) : [];
  const texts: string[] = [];
  const notes: string[] = [];
  let toolResults = 0;
  for (const block of blocks) {
    const type = str(block.type);
    if (type === 'text') {
      if (str(block.text).trim() !== '') texts.push(str(block.text));
    } else if (type === 'tool_use') {
      notes.push(`Tool call (${str(block.name) || 'tool'}): ${preview(block.input)}`);
    } else if (type === 'tool_result') {
      toolResults++;
      notes.push(`Tool result: ${preview(toolResultText(block.content))}`);
    } else if (type !== 'thinking' && type !== 'redacted_thinking' && type !== '') {
      notes.push(`A "${type}" block was not imported.`);
    }
  }
  // No blocks at all (an older export): the message's own text.
  if (blocks.length === 0 && str(raw.text).trim() !== '') texts.push(str(raw.text));
  for (const a of Array.isArray(raw.attachments) ? raw.attachments.filter(isRecord) : []) {
    notes.push(`Attachment: ${str(a.file_name) || 'a file with no name'}${str(a.file_type) ? ` (${str(a.file_type)})` : ''}`);
  }
  for (const f of Array.isArray(raw.files) ? raw.files.filter(isRecord) : []) {
    notes.push(`File: ${str(f.file_name) || 'a file with no name'}`);
  }
  const text = ctx.text(texts.join('\n\n')).trim();
  return { text, notes: notes.map((n) => ctx.text(n)), onlyToolResults: toolResults > 0 && text === '' && toolResults === notes.length };
}

function toolResultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((c) => (isRecord(c) ? str(c.text) : typeof c === 'string' ? c : '')).join(' ');
  return preview(content);
}
