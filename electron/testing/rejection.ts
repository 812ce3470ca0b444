// For tests: the ApiError a call is refused with. Fails the test when the call succeeds or fails
// with anything other than an ApiError (and, given `code`, with another code).
import { expect } from 'vitest';
import { ApiError } from '../../shared/api.js';

export async function rejection(p: Promise<unknown>, code?: string): Promise<ApiError> {
  const outcome = await p.then(
    () => ({ resolved: true as const }),
    (error: unknown) => ({ resolved: false as const, error }),
  );
  if (outcome.resolved) throw new Error('expected the call to be refused, and it succeeded');
  expect(outcome.error).toBeInstanceOf(ApiError);
  if (code) expect((outcome.error as ApiError).code).toBe(code);
  return outcome.error as ApiError;
}
