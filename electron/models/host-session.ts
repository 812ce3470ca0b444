// One model's conversation with a model host (the Hugging Face hub or a mirror with the same paths):
// its requests, their retries with backoff, silent connections dropped, and a stop surfacing as the
// `cancelled` error everywhere.
import { setTimeout as sleep } from 'node:timers/promises';
import { ModelError, type CatalogEntry } from './catalog.js';
import { describeError } from './disk-io.js';

export const DEFAULT_MODEL_HOST = 'https://huggingface.co';

export function normaliseHost(host: string | undefined): string {
  const raw = (host ?? DEFAULT_MODEL_HOST).trim();
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ModelError('network', `The model host "${raw}" is not a web address.`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ModelError('network', `The model host "${raw}" must start with https://.`);
  }
  return url.href.replace(/\/+$/, '');
}

export function hostLabel(host: string): string {
  try {
    return new URL(host).host;
  } catch {
    return host;
  }
}

/** A dropped connection, a timeout or a server hiccup: worth another attempt. */
export class RetryableError extends Error {}

/** Disk and protocol problems arrive as ModelErrors; anything else came from the network. */
export function isRetryable(error: unknown): boolean {
  return !(error instanceof ModelError);
}

export interface HostSessionOptions {
  /** Default https://huggingface.co; mirrors (https://hf-mirror.com) use the same paths. */
  host?: string;
  fetch?: typeof fetch;
  signal?: AbortSignal;
  /** Attempts after a dropped connection that brought no new bytes (default 4). */
  retries?: number;
  /** First backoff delay, doubled per failed attempt (default 1 s). */
  retryDelayMs?: number;
  /** A connection silent this long is dropped and retried (default 60 s). */
  idleTimeoutMs?: number;
}

export class HostSession {
  /** The host's address without a trailing slash. */
  readonly host: string;
  readonly signal: AbortSignal;
  readonly retries: number;
  readonly idleTimeoutMs: number;
  private readonly retryDelayMs: number;
  private readonly fetch: typeof fetch;

  constructor(
    private readonly entry: Pick<CatalogEntry, 'id' | 'name'>,
    options: HostSessionOptions,
  ) {
    this.host = normaliseHost(options.host);
    this.fetch = options.fetch ?? globalThis.fetch;
    this.signal = options.signal ?? new AbortController().signal;
    this.retries = options.retries ?? 4;
    this.retryDelayMs = options.retryDelayMs ?? 1000;
    this.idleTimeoutMs = options.idleTimeoutMs ?? 60_000;
  }

  /** The host as a person knows it (its name, without the scheme). */
  get label(): string {
    return hostLabel(this.host);
  }

  async request(url: string, headers: Record<string, string>, extra?: AbortSignal): Promise<Response> {
    const signal = extra ? AbortSignal.any([this.signal, extra]) : this.signal;
    try {
      // identity: byte counts and Range offsets must refer to the file, not a compressed form of it.
      return await this.fetch(url, { headers: { 'accept-encoding': 'identity', ...headers }, redirect: 'follow', signal });
    } catch (error) {
      if (this.signal.aborted) throw this.cancelled();
      throw new RetryableError(describeError(error));
    }
  }

  /** Repeats `attempt` while the connection fails or the host answers 429 or 5xx. */
  async withRetries(what: string, attempt: () => Promise<Response>): Promise<Response> {
    for (let failures = 0; ; failures++) {
      let reason: string;
      try {
        const response = await attempt();
        if (response.status !== 429 && response.status < 500) return response;
        await response.body?.cancel();
        reason = `HTTP ${response.status}`;
      } catch (error) {
        if (!isRetryable(error)) throw error;
        reason = describeError(error);
      }
      if (failures >= this.retries) {
        throw new ModelError(
          'network',
          `Could not get ${what} of "${this.entry.id}" from ${this.label} (${reason}). ` + 'Check the connection and the model host setting.',
        );
      }
      await this.backoff(failures + 1);
    }
  }

  /** Waits before attempt number `failures + 1`: the first delay, doubled per failure since. */
  async backoff(failures: number): Promise<void> {
    try {
      await sleep(this.retryDelayMs * 2 ** (failures - 1), undefined, { signal: this.signal });
    } catch {
      throw this.cancelled();
    }
  }

  throwIfCancelled(): void {
    if (this.signal.aborted) throw this.cancelled();
  }

  cancelled(): ModelError {
    return new ModelError('cancelled', `The download of ${this.entry.name} was stopped. What arrived is kept, and the next download continues from there.`);
  }
}

/** Aborts a request that has been silent for `ms`: a stalled connection would otherwise hang forever. */
export class IdleTimer {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout;
  fired = false;

  constructor(readonly ms: number) {
    this.timer = this.arm();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  touch(): void {
    clearTimeout(this.timer);
    this.timer = this.arm();
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  private arm(): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.fired = true;
      this.controller.abort();
    }, this.ms);
    timer.unref();
    return timer;
  }
}
