import { ApiError } from '../../shared/api.js';

/** Something fetched from the host: not asked for yet, on its way, answered, or failed (the error of the last try). */
export interface Loadable {
  loaded: boolean;
  loading: boolean;
  error: unknown;
}

export const idle = (): Loadable => ({ loaded: false, loading: false, error: null });

/** The thing asked for is not there (any more): nothing to retry. */
export function isNotFound(err: unknown): boolean {
  return err instanceof ApiError && err.code === 'not_found';
}
