// Images a person attaches to a message: uploaded a chunk at a time (the transport's body limit), kept
// as files in the data folder (never in the database), referenced from the message row by id.
import { z } from 'zod';
import type { Ability } from './providers.js';
import { id } from './fields.js';

/** The image types Anima takes, told apart by their first bytes, never by a file's name. */
export const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'] as const;
export type ImageType = (typeof IMAGE_TYPES)[number];

/** Images on one message. */
export const MAX_IMAGES_PER_MESSAGE = 4;
/** The largest image file taken, before any resizing. */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
/**
 * The longest side an image is sent to a model with: Anthropic's advice (larger is scaled down by the
 * server, costing time and tokens); OpenAI's high-detail tiles and the open vision models do well
 * with it too. The window resizes before uploading.
 */
export const MAX_IMAGE_SIDE = 1568;
/** Bytes of an image per upload call: base64 makes them 4/3 as many, well inside the 1 MB body limit. */
export const IMAGE_CHUNK_BYTES = 512 * 1024;

/** An attached image's id: the start of its content's SHA-256 and its type's extension (one file per content). */
export const IMAGE_ID_PATTERN = /^[0-9a-f]{32}\.(png|jpg|webp|gif)$/;
export const imageId = z.string().regex(IMAGE_ID_PATTERN, 'expected an image id');

/** What a message keeps of an image it carries. */
export interface ImageRef {
  id: string;
  type: ImageType;
  bytes: number;
  width: number;
  height: number;
}

/**
 * Whether a chat model is sent images. What the server says wins (Ollama's `vision` capability);
 * otherwise the kind and the model's name: Anthropic's Claude 3 and later all see; OpenAI's own
 * GPT-4o/4.1/5 and o-series models see; open models see when their name says so (llava, -vl,
 * vision, gemma3, pixtral, …). A model none of these speak for gets no image: a text-only server
 * would refuse the whole request.
 */
export function seesImages(config: { kind: string; model: string }, images: Ability | undefined): boolean {
  if (images === 'yes') return true;
  if (images === 'no') return false;
  const model = config.model.toLowerCase();
  if (config.kind === 'local') return false;
  if (config.kind === 'anthropic') return !/claude-(?:instant|2)/.test(model);
  return VISION_MODEL.test(model);
}
const VISION_MODEL =
  /gpt-4o|gpt-4\.1|gpt-4-turbo|gpt-4-vision|gpt-5|(?:^|\/)o[134](?:-|$)|claude|gemini|llava|bakllava|vision|[-_.]vl\b|vl[-_:]|qwen2\.5-?vl|qwen-?vl|minicpm-?v|moondream|pixtral|gemma-?3|llama-?4|mistral-small-?3\.[12]|internvl|granite-vision|cogvlm|smolvlm|phi-?3\.5-vision|phi-?4-multimodal/;

export const attachmentsInputs = {
  /**
   * One chunk of an image, in order: the first call has no uploadId (and offset 0) and gets one back.
   * The last chunk's answer carries the stored image (`image`): checked by its first bytes (png, jpeg,
   * webp, gif) and its size (up to MAX_IMAGE_BYTES); a file that is neither is refused in words.
   */
  'attachments.upload': z
    .object({
      uploadId: id.optional(),
      size: z.number().int().min(1),
      offset: z.number().int().min(0),
      data: z
        .string()
        .min(1)
        .max(Math.ceil(IMAGE_CHUNK_BYTES / 3) * 4)
        .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'expected base64'),
    })
    .strict(),
  /** An attached image's bytes (base64) and type, to show it. */
  'attachments.get': z.object({ id: imageId }).strict(),
} as const;

export interface AttachmentsOutputs {
  'attachments.upload': { uploadId: string; received: number; complete: boolean; image?: ImageRef };
  'attachments.get': { type: ImageType; data: string };
}
