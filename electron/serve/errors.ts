// Error statuses (the body is always {error:{code, message, field?}}; the code is what the
// renderer acts on, the status is for logs and tools):
//   invalid_input 400 · unauthorized 401 · not_found 404 · unknown_method 404 · conflict 409 ·
//   data_dir_locked 409 · no_provider 409 · cancelled 409 · payload_too_large 413 ·
//   provider_timeout 504 · every other provider_* 502 · model_not_found, model_network and
//   model_integrity 502 (the model host failed) · model_not_installed, model_damaged and model_busy 409 ·
//   model_disk_full 507 · model_io and internal 500 · anything unexpected 500.
// provider_* are gateway failures: the request was fine, the model behind us failed. Never 401/404/
// 429 for them — provider_auth as 401 would look like our own token was rejected, and
// provider_model_not_found as 404 like an unknown method. no_provider and cancelled are 409: the
// request was valid but the app's state (nothing configured; the user pressed Stop) prevents it.
// An ApiError('internal') is treated like any unexpected error: its message may carry internals.
import { ApiError, ERROR_CODES, type ErrorCode } from '../../shared/api.js';

const ERROR_STATUS: Record<ErrorCode, number> = {
  invalid_input: 400,
  unauthorized: 401,
  not_found: 404,
  unknown_method: 404,
  conflict: 409,
  data_dir_locked: 409,
  no_provider: 409,
  cancelled: 409,
  interrupted: 409,
  payload_too_large: 413,
  provider_unreachable: 502,
  provider_auth: 502,
  provider_model_not_found: 502,
  provider_rate_limited: 502,
  provider_quota: 502,
  provider_server_error: 502,
  provider_timeout: 504,
  provider_bad_response: 502,
  provider_context_overflow: 502,
  provider_not_installed: 502,
  model_not_found: 502,
  model_network: 502,
  model_integrity: 502,
  model_not_installed: 409,
  model_damaged: 409,
  model_busy: 409,
  model_disk_full: 507,
  model_io: 500,
  internal: 500,
};

/** The HTTP status for an API error code. */
export function statusForErrorCode(code: ErrorCode): number {
  return ERROR_STATUS[code] ?? 500;
}

/** An ApiError, also when it crossed a module boundary and lost its prototype; null for anything else. */
export function asApiError(err: unknown): ApiError | null {
  if (err instanceof ApiError) return err;
  if (err instanceof Error && err.name === 'ApiError') {
    const { code, field } = err as Error & { code?: unknown; field?: unknown };
    if (typeof code === 'string' && (ERROR_CODES as readonly string[]).includes(code)) {
      return new ApiError(code as ErrorCode, err.message, typeof field === 'string' ? field : undefined);
    }
  }
  return null;
}
