// How long one message may be for the chat model, said before sending: the same estimate the host
// fits the history with (electron/llm/context.ts: four characters a token, one a CJK character) and
// the same window (the smaller of the person's setting and what the server says it gives), less the
// room kept for the reply and an allowance for the system prompt the host puts first. A message's
// pictures count as the host's fit counts them (shared/image-tokens.ts) when the model sees them.
import { seesImages, type ImageRef, type ProviderConfig } from '../../shared/api.js';
import { imageFamily, imageTokens } from '../../shared/image-tokens.js';

const WIDE = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]/g;
/** Room the system prompt (the self, resident memory, the rules) takes, roughly, before any message. */
export const SYSTEM_ALLOWANCE = 1500;

export function estimateTokens(text: string): number {
  const wide = text.match(WIDE)?.length ?? 0;
  return wide + Math.ceil((text.length - wide) / 4);
}

export interface MessageLimit {
  /** The context window the conversation is fitted into. */
  window: number;
  /** About how many tokens one message may take. */
  tokens: number;
}

export function messageLimit(provider: Pick<ProviderConfig, 'contextTokens' | 'server'>): MessageLimit {
  const server = provider.server?.contextTokens;
  const window = server ? Math.min(server, provider.contextTokens) : provider.contextTokens;
  const reply = Math.min(1024, Math.floor(window / 4));
  return { window, tokens: Math.max(256, window - reply - SYSTEM_ALLOWANCE) };
}

/**
 * Tokens a message's pictures take for this chat model: each by its family's documented rule when
 * the model is sent them; none when it cannot see (it gets only the words that pictures were shared).
 */
export function picturesTokens(
  provider: Pick<ProviderConfig, 'kind' | 'baseUrl' | 'model' | 'abilities'>,
  images: readonly Pick<ImageRef, 'width' | 'height'>[],
): number {
  if (images.length === 0 || !seesImages(provider, provider.abilities?.images)) return 0;
  const family = imageFamily(provider.kind, provider.baseUrl);
  return images.reduce((sum, image) => sum + imageTokens(family, image.width, image.height), 0);
}

/**
 * About how many tokens a message of these words and pictures takes when that is more than the
 * limit; null when it fits. Words that cannot pass it even at a token a character are not counted
 * (a long paste would be scanned again at every key).
 */
export function sizeOverLimit(text: string, pictures: number, limit: MessageLimit): number | null {
  if (text.length + pictures <= limit.tokens) return null;
  const size = estimateTokens(text) + pictures;
  return size > limit.tokens ? size : null;
}
