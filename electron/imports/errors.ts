// Why an import file was refused, in words a person understands. Parsing never half-succeeds: a file
// that is damaged or of another kind throws one ImportError naming the file and what is wrong, and
// nothing is stored (the parsers are pure; storing is the importer's step after a clean parse).

export type ImportErrorCode =
  /** The file is larger than MAX_IMPORT_BYTES (or a card PNG larger than MAX_CARD_BYTES). */
  | 'too_large'
  /** The file is empty, or holds no conversation / card at all. */
  | 'empty'
  /** The text is not valid JSON / JSON Lines (usually a file cut off while copying or downloading). */
  | 'broken_json'
  /** Valid JSON, but not the shape of any export Anima reads (or one of its items is not). */
  | 'wrong_shape'
  /** Two conversations (or two messages of one) carry the same id: a merged or repeated export. */
  | 'duplicate_id'
  /** A PNG whose chunks are damaged (CRC mismatch, cut off) or whose card text cannot be read. */
  | 'card_corrupt'
  /** A PNG with no character card in it. */
  | 'card_missing'
  /** A zip archive that is cut off or damaged, or whose entry claims an implausible size (a zip bomb). */
  | 'broken_zip'
  /** An Anima archive written by a newer version of Anima than this one (a schema this app cannot read). */
  | 'newer_version'
  /** Neither the name nor the bytes say what this file is. */
  | 'unknown_format';

export class ImportError extends Error {
  constructor(
    public readonly code: ImportErrorCode,
    /** The file's name as the person gave it (no folder), so the message can say which file. */
    public readonly file: string,
    message: string,
  ) {
    super(message);
    this.name = 'ImportError';
  }
}
