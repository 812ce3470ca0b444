// Errors in words: what happened and what to do, from the error code — never a stack trace.
import { ApiError, ERROR_CODES, type ApiErrorShape, type ErrorCode } from '../../shared/api.js';

export interface ErrorWords {
  code: ErrorCode;
  what: string;
  todo: string;
  /** The server's own message, for the curious (shown small, under the sentence). */
  detail: string | null;
}

const known = new Set<string>(ERROR_CODES);

export type Translate = (key: string) => string;

export function toErrorShape(err: unknown): ApiErrorShape {
  if (err instanceof ApiError) return { code: err.code, message: err.message, field: err.field };
  if (err && typeof err === 'object' && 'code' in err && 'message' in err) {
    const e = err as { code: unknown; message: unknown; field?: unknown };
    if (typeof e.code === 'string' && known.has(e.code)) {
      return { code: e.code as ErrorCode, message: String(e.message), ...(typeof e.field === 'string' ? { field: e.field } : {}) };
    }
  }
  return { code: 'internal', message: err instanceof Error ? err.message : String(err) };
}

export function errorWords(t: Translate, err: unknown): ErrorWords {
  const shape = toErrorShape(err);
  const code = known.has(shape.code) ? shape.code : 'internal';
  // One message too long for the model is not a conversation that no longer fits: its own heading.
  const tooLong = code === 'provider_context_overflow' && shape.field === 'content';
  return {
    code,
    what: tooLong ? t('longMessage.errorWhat') : t(`errors.${code}.what`),
    todo: tooLong ? t('longMessage.errorTodo') : t(`errors.${code}.todo`),
    detail: shape.message && shape.message.trim() ? shape.message : null,
  };
}

/** One line for a toast. */
export function errorSentence(t: Translate, err: unknown): string {
  const w = errorWords(t, err);
  return `${w.what} ${w.todo}`;
}
