// Character cards: V1 (a bare { name, description, personality, scenario, first_mes, mes_example }),
// V2 ({ spec: "chara_card_v2", data: {…} }) and V3 ({ spec: "chara_card_v3", data: {…} }), as JSON or
// inside a PNG as a base64 text chunk `chara` (V1/V2) or `ccv3` (V3; preferred when both are there,
// as the V3 spec says). Other text chunks (Title, Author, …) are ignored. The base64 decodes to UTF-8.
//
// The card's fields land in the six self blocks, which speak as the companion; the person reviews
// them before anything is saved:
//
// | block        | from the card                                                        |
// | ------------ | -------------------------------------------------------------------- |
// | identity     | description, then system_prompt                                      |
// | personality  | personality                                                          |
// | values       | — (no card field says what the character values; left as it is)      |
// | relationship | scenario (the situation between the character and the person)        |
// | voice        | mes_example (how the character talks), then post_history_instructions |
// | narrative    | the embedded lorebook's enabled entries (the character's world)       |
//
// {{char}} / <BOT> become the card's name and {{user}} / <USER> become "you" (你 in a card written in
// Chinese or Japanese); CRLF becomes LF.
// V1 mirror fields at the top level of a V2/V3 card are ignored in favour of data.*.
import type { SelfBlockKey } from '../../../shared/api.js';
import { storableValue } from '../../../shared/text.js';
import type { ImportedCard } from '../types.js';
import { isRecord, str, type ParseContext } from '../context.js';
import { scanPng, type PngTextChunk } from './png.js';

/** What a self block can hold (shared/api/self.ts 'self.update'); a longer mapped block is reported, not cut. */
export const SELF_BLOCK_MAX = 20_000;

/** True for a value that looks like a character card of any version. */
export function isCard(value: unknown): boolean {
  if (!isRecord(value)) return false;
  if (typeof value.spec === 'string' && value.spec.startsWith('chara_card_')) return true;
  return typeof value.name === 'string' && ('first_mes' in value || 'personality' in value) && 'description' in value;
}

export function parseCardPng(buf: Buffer, ctx: ParseContext): ImportedCard {
  const scan = scanPng(buf);
  const pick = (keyword: string): PngTextChunk | undefined => scan.texts.find((t) => t.keyword.toLowerCase() === keyword);
  const chunks = [pick('ccv3'), pick('chara')].filter((c): c is PngTextChunk => c !== undefined);
  if (chunks.length === 0) {
    if (scan.truncated) ctx.fail('card_corrupt', 'the PNG is cut off before its end, and no character card was found in what is there.');
    ctx.fail('card_missing', 'this PNG holds no character card (no "chara" or "ccv3" text chunk).');
  }
  for (const chunk of chunks) {
    if (!chunk.crcOk)
      ctx.fail('card_corrupt', `the card's "${chunk.keyword}" chunk is damaged (its CRC check fails); the file was changed or corrupted after it was made.`);
  }
  const chosen = chunks[0]!;
  const json = decodeCardText(chosen, ctx);
  if (scan.damaged.length > 0) ctx.warn(`The picture itself is damaged (${scan.damaged.join(', ')} chunk CRC); the card text is intact.`);
  if (scan.truncated) ctx.warn('The picture is cut off after the card text; the card text is intact.');
  return cardFrom(json, ctx);
}

function decodeCardText(chunk: PngTextChunk, ctx: ParseContext): unknown {
  const text = chunk.text?.trim() ?? '';
  if (text === '' || !/^[A-Za-z0-9+/=\s]+$/.test(text)) ctx.fail('card_corrupt', `the card's "${chunk.keyword}" chunk is not base64 text.`);
  let json: string;
  try {
    json = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(text, 'base64'));
  } catch {
    ctx.fail('card_corrupt', `the card's "${chunk.keyword}" chunk does not decode to UTF-8 text.`);
  }
  try {
    return JSON.parse(json);
  } catch (err) {
    ctx.fail('card_corrupt', `the card's "${chunk.keyword}" chunk is not valid JSON (${(err as Error).message}).`);
  }
}

export function cardFrom(json: unknown, ctx: ParseContext): ImportedCard {
  if (!isCard(json)) ctx.fail('wrong_shape', 'the card has neither a "spec" nor the name and description a character card has.');
  const card = json as Record<string, unknown>;
  const spec = str(card.spec);
  const version: ImportedCard['spec'] = spec === 'chara_card_v3' ? 'v3' : spec === 'chara_card_v2' ? 'v2' : 'v1';
  const data = version === 'v1' ? card : isRecord(card.data) ? card.data : null;
  if (!data) ctx.fail('wrong_shape', `the card says it is ${spec} but has no "data" object.`);
  const name = ctx.text(data.name).trim() || ctx.text(card.name).trim();
  if (name === '') ctx.fail('wrong_shape', 'the card has no name.');

  // {{user}} is the person: "you", or 你 in a card written in Chinese/Japanese (more CJK than Latin letters).
  const sample = `${str(data.description)}${str(data.first_mes)}`;
  const you = (sample.match(/[\u3040-\u30ff\u4e00-\u9fff]/g)?.length ?? 0) > (sample.match(/[A-Za-z]/g)?.length ?? 0) ? '你' : 'you';
  const fill = (value: unknown): string =>
    ctx
      .text(value)
      .replace(/\{\{char\}\}|<BOT>/gi, name)
      .replace(/\{\{user\}\}|<USER>/gi, you)
      .trim();
  const join = (...parts: unknown[]): string =>
    parts
      .map(fill)
      .filter((p) => p !== '')
      .join('\n\n');

  const blocks: Partial<Record<SelfBlockKey, string>> = {};
  const set = (key: SelfBlockKey, text: string): void => {
    if (text === '') return;
    blocks[key] = text;
    if (text.length > SELF_BLOCK_MAX)
      ctx.warn(
        `The card's ${key} text is ${text.length.toLocaleString('en')} characters, more than the ${SELF_BLOCK_MAX.toLocaleString('en')} a block holds; shorten it before saving.`,
      );
  };
  set('identity', join(data.description, data.system_prompt));
  set('personality', join(data.personality));
  set('relationship', join(data.scenario));
  set('voice', join(data.mes_example, data.post_history_instructions));
  set('narrative', join(...lore(data.character_book)));

  const result: ImportedCard = { name, blocks, spec: version, raw: storableValue(card) };
  const greeting = fill(data.first_mes);
  if (greeting !== '') result.greeting = greeting;
  return result;
}

/** The enabled lorebook entries, each as "comment: content" (or just the content). */
function lore(book: unknown): string[] {
  if (!isRecord(book) || !Array.isArray(book.entries)) return [];
  return book.entries
    .filter((e): e is Record<string, unknown> => isRecord(e) && e.enabled !== false && str(e.content).trim() !== '')
    .map((e) => (str(e.comment).trim() !== '' ? `${str(e.comment).trim()}: ${str(e.content).trim()}` : str(e.content).trim()));
}
