// What one picture costs in a model's context window, estimated from its width and height (the
// attachment knows them: electron/attachments/images.ts) by the rule the provider family documents.
// The host's fit (electron/llm/context.ts) counts the images a request will carry, so a conversation
// of pictures drops its oldest turns as a long one does instead of being refused by the server; the
// composer counts a new message's pictures by the same rule before it is sent.
//
// - OpenAI (api.openai.com, Azure OpenAI): "Calculating costs" in
//   https://platform.openai.com/docs/guides/images-vision — GPT-4o-style models scale the image into
//   2048×2048, then its shortest side to 768, and count 170 tokens per 512-px tile plus 85; the
//   gpt-4.1-mini / o4-mini style counts 32×32 patches, at most 1,536. Either may serve a name, so the
//   larger of the two is taken.
// - Anthropic: "Evaluate image size" in https://docs.anthropic.com/en/docs/vision — tokens ≈
//   width × height / 750; an image over 1,568 px on its long edge or ~1,600 tokens is scaled down
//   first, so one image costs at most about 1,600.
// - Every other server (Ollama, llama.cpp, LM Studio, vLLM, OpenRouter, on-device): each model's
//   encoder decides and the server does not say — fixed-size ones (Gemma 3: 256 tokens; LLaVA 1.5: 576,
//   a 336-px picture in 14-px patches) or by size (Qwen2-VL: a token per 28×28 pixels,
//   https://huggingface.co/Qwen/Qwen2-VL-7B-Instruct). So: Qwen's patches, at least LLaVA's 576, at
//   most 1,600. (A flat 1,600 dropped a small picture's turn on llava:7b's 4,096 window, whose real
//   cost is 576.)
import type { ProviderKind } from './api/providers.js';

export type ImageFamily = 'openai' | 'anthropic' | 'other';

/** The most one picture is counted where the family's rule is unknown (and the most Anthropic counts). */
export const UNKNOWN_IMAGE_TOKENS = 1600;
/** The least: LLaVA 1.5's fixed 576. */
const MIN_OTHER_IMAGE_TOKENS = 576;

/** Which documented rule a connection's pictures follow. */
export function imageFamily(kind: ProviderKind, baseUrl: string): ImageFamily {
  if (kind === 'anthropic') return 'anthropic';
  if (kind !== 'openai-compatible') return 'other';
  let host = '';
  try {
    host = new URL(baseUrl).hostname.toLowerCase();
  } catch {
    return 'other';
  }
  return host === 'api.openai.com' || host.endsWith('.openai.azure.com') ? 'openai' : 'other';
}

/** OpenAI's high-detail tiles: 85 + 170 per 512-px tile after the 2048 box and the 768 shortest side. */
export function openAiTiles(width: number, height: number): number {
  let w = width;
  let h = height;
  if (w > 2048 || h > 2048) {
    const r = Math.min(2048 / w, 2048 / h);
    w = Math.floor(w * r);
    h = Math.floor(h * r);
  }
  // (Scaled up as well as down: a small picture is not counted smaller than the rule might.)
  const r = 768 / Math.min(w, h);
  w = Math.floor(w * r);
  h = Math.floor(h * r);
  return 85 + 170 * Math.ceil(w / 512) * Math.ceil(h / 512);
}

/** Tokens one picture of this size takes in a request of this family. */
export function imageTokens(family: ImageFamily, width: number, height: number): number {
  if (!(width > 0 && height > 0)) return UNKNOWN_IMAGE_TOKENS;
  switch (family) {
    case 'openai':
      return Math.max(openAiTiles(width, height), Math.min(1536, Math.ceil(width / 32) * Math.ceil(height / 32)));
    case 'anthropic':
      return Math.min(UNKNOWN_IMAGE_TOKENS, Math.ceil((width * height) / 750));
    case 'other':
      return Math.min(UNKNOWN_IMAGE_TOKENS, Math.max(MIN_OTHER_IMAGE_TOKENS, Math.ceil(width / 28) * Math.ceil(height / 28)));
  }
}
