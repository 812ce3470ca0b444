// What every parser shares: text made storable where it enters, dates read into ISO UTC and checked
// for plausibility, duplicate-id checks, and the warnings a person is shown before importing.
import { storableText } from '../../shared/text.js';
import { ImportError } from './errors.js';

/**
 * The earliest date an imported message may carry. Nothing a person could export from a chat app
 * was written before 1990; a date before it is a unit mix-up (seconds read as milliseconds) or a
 * zero date (1970) — kept as "no date" rather than filed in the wrong decade.
 */
export const EARLIEST_PLAUSIBLE = Date.UTC(1990, 0, 1);
/** How far past the parse's "now" a date may lie (clock skew between machines) before it counts as the future. */
export const FUTURE_SLACK_MS = 24 * 60 * 60 * 1000;

export interface ParseOptions {
  /** The moment dates are judged against (tests pin it); defaults to the real now. */
  now?: Date;
}

/** One parse's running state: the file's name, its warnings, and the implausible dates seen. */
export class ParseContext {
  readonly warnings: string[] = [];
  readonly now: number;
  private implausible = 0;
  private implausibleExample: string | null = null;
  private unreadable = 0;
  private unreadableExample: string | null = null;

  constructor(
    readonly file: string,
    options: ParseOptions = {},
  ) {
    this.now = (options.now ?? new Date()).getTime();
  }

  warn(message: string): void {
    this.warnings.push(message);
  }

  fail(code: ConstructorParameters<typeof ImportError>[0], message: string): never {
    throw new ImportError(code, this.file, `${this.file}: ${message}`);
  }

  /** Text as it enters: storable (NUL and lone surrogates replaced), line endings normalised to LF. */
  text(value: unknown): string {
    if (typeof value !== 'string') return '';
    return storableText(value.replace(/\r\n?/g, '\n'));
  }

  /**
   * A moment in milliseconds as ISO UTC — or null, counted, when it is not a real date, lies before
   * 1990 or after now (dates in the future or in 1970 are kept as "no date" with a warning, so one
   * bad timestamp does not refuse a whole history).
   */
  moment(ms: number | null | undefined): string | null {
    if (ms === null || ms === undefined || !Number.isFinite(ms)) return null;
    if (ms < EARLIEST_PLAUSIBLE || ms > this.now + FUTURE_SLACK_MS) {
      this.implausible++;
      this.implausibleExample ??= Number.isFinite(new Date(ms).getTime()) ? new Date(ms).toISOString() : String(ms);
      return null;
    }
    return new Date(ms).toISOString();
  }

  /** Unix seconds (float), as ChatGPT writes them. */
  fromSeconds(value: unknown): string | null {
    return typeof value === 'number' ? this.moment(value * 1000) : null;
  }

  /** Unix seconds or milliseconds, told apart by size (Open WebUI writes both): 10^11 s is the year 5138, 10^11 ms is 1973. */
  fromEpoch(value: unknown): string | null {
    if (typeof value !== 'number') return null;
    return Math.abs(value) >= 1e11 ? this.moment(value) : this.moment(value * 1000);
  }

  /** Unix milliseconds (number), as SillyTavern 2023 writes them. */
  fromMillis(value: unknown): string | null {
    return typeof value === 'number' ? this.moment(value) : null;
  }

  /** An ISO 8601 string with a zone (Claude, SillyTavern 2026); a zone-less or unreadable one is null, counted. */
  fromIso(value: unknown): string | null {
    if (typeof value !== 'string' || value.trim() === '') return null;
    if (!/^\d{4}-\d{2}-\d{2}T[\d:.]+(Z|[+-]\d{2}:?\d{2})$/i.test(value.trim()) || Number.isNaN(Date.parse(value))) return this.unreadableDate(value);
    return this.moment(Date.parse(value));
  }

  /** A date the parser could not read: null, counted for one warning at the end. */
  unreadableDate(value: string): null {
    this.unreadable++;
    this.unreadableExample ??= value.length > 40 ? `${value.slice(0, 39)}…` : value;
    return null;
  }

  /** Adds the warnings about implausible and unreadable dates, if there were any; call once at the end of a parse. */
  finish(): string[] {
    if (this.unreadable > 0) {
      this.warn(
        `${this.unreadable} date${this.unreadable === 1 ? '' : 's'} could not be read (for example "${this.unreadableExample}") and ${this.unreadable === 1 ? 'was' : 'were'} left empty.`,
      );
    }
    if (this.implausible > 0) {
      this.warn(
        `${this.implausible} date${this.implausible === 1 ? '' : 's'} lay before 1990 or in the future (for example ${this.implausibleExample}) and ${this.implausible === 1 ? 'was' : 'were'} left empty.`,
      );
    }
    return this.warnings;
  }
}

/** Throws duplicate_id when an id repeats; null/empty ids are not checked. */
export class IdSet {
  private readonly seen = new Map<string, string>();
  constructor(
    private readonly ctx: ParseContext,
    private readonly what: string,
  ) {}
  add(id: string | null | undefined, where: string): void {
    if (!id) return;
    const earlier = this.seen.get(id);
    if (earlier !== undefined)
      this.ctx.fail('duplicate_id', `the ${this.what} id "${id}" appears twice (${earlier} and ${where}); this looks like two exports merged into one file.`);
    this.seen.set(id, where);
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A string field, or '' */
export function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** A short one-line preview of a value for a note (tool inputs, results). */
export function preview(value: unknown, max = 200): string {
  const s = (typeof value === 'string' ? value : (JSON.stringify(value) ?? '')).replace(/\s+/g, ' ').trim();
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** A size in the words a refusal uses: "3.4 MB" under 10 MB, "256 MB" above. */
export function megabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(bytes < 10 * 1024 * 1024 ? 1 : 0)} MB`;
}
