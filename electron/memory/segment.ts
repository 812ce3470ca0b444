// Chinese (and Japanese kanji) text has no spaces between words, so Postgres's parser would index a
// whole sentence as one token. Jieba splits it into words before indexing. A failure never blocks a
// write: the row is stored unsegmented and is still found by its trigram index.
import { createRequire } from 'node:module';

const CJK = /[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]/;

interface JiebaLike {
  cut(text: string, hmm?: boolean): string[];
}

let jieba: JiebaLike | null | undefined;

function loadJieba(): JiebaLike | null {
  if (jieba !== undefined) return jieba;
  try {
    // Loaded on first CJK text only: the dictionary takes ~0.2 s to load.
    const require = createRequire(import.meta.url);
    const { Jieba } = require('@node-rs/jieba') as { Jieba: { withDict(dict: Uint8Array): JiebaLike } };
    const { dict } = require('@node-rs/jieba/dict.js') as { dict: Uint8Array };
    jieba = Jieba.withDict(dict);
  } catch (err) {
    console.warn(`[anima warn] Chinese word segmentation is unavailable: ${(err as Error).message}`);
    jieba = null;
  }
  return jieba;
}

export function hasCjk(text: string): boolean {
  return CJK.test(text);
}

/** Words of `text` as jieba cuts them (non-CJK text passes through as itself). */
export function cutWords(text: string): string[] | null {
  const j = loadJieba();
  if (!j) return null;
  try {
    return j.cut(text, true);
  } catch {
    return null;
  }
}

/**
 * The text to index: CJK runs split into space-separated words, everything else unchanged.
 * Returns null when the text has no CJK (index the content itself) or segmentation failed.
 */
export function segmentForIndex(text: string): string | null {
  if (!hasCjk(text)) return null;
  const words = cutWords(text);
  if (!words) return null;
  return words
    .map((w) => w.trim())
    .filter(Boolean)
    .join(' ');
}
