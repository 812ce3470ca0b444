// How a call fails: the error codes (each one a person's words can be chosen for), the shape an
// error travels in, and the error every transport rejects with.

export interface ApiErrorShape {
  code: ErrorCode;
  message: string;
  /** For invalid_input: the dotted path of the offending field. */
  field?: string;
}

export const ERROR_CODES = [
  'invalid_input',
  'not_found',
  'conflict',
  'unauthorized',
  'payload_too_large',
  'unknown_method',
  'data_dir_locked',
  'no_provider',
  // Provider failures, in words a person can act on.
  'provider_unreachable',
  'provider_auth',
  'provider_model_not_found',
  'provider_rate_limited',
  'provider_quota',
  'provider_server_error',
  'provider_timeout',
  'provider_bad_response',
  'provider_context_overflow',
  'provider_not_installed',
  // On-device model downloads (Settings → Models → On this computer).
  /** Not a model Anima offers, or the model host does not have it (or one of its files). */
  'model_not_found',
  /** The model is not downloaded (yet), or not completely. */
  'model_not_installed',
  'model_disk_full',
  /** A downloaded file had the wrong size or checksum and was discarded. */
  'model_integrity',
  /** An installed model's files are missing or cut short on disk (nothing was thrown away). */
  'model_damaged',
  /** The model host could not be reached, or kept failing. */
  'model_network',
  /** The model is downloading or being removed right now. */
  'model_busy',
  /** The disk refused a write or a rename. */
  'model_io',
  /** The person pressed Stop. */
  'cancelled',
  /** Anima closed or crashed while the reply was being written. */
  'interrupted',
  'internal',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** The error every transport rejects with. */
export class ApiError extends Error implements ApiErrorShape {
  constructor(
    public code: ErrorCode,
    message: string,
    public field?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
  toJSON(): ApiErrorShape {
    return this.field ? { code: this.code, message: this.message, field: this.field } : { code: this.code, message: this.message };
  }
  static from(shape: ApiErrorShape): ApiError {
    return new ApiError(shape.code, shape.message, shape.field);
  }
}
