// The server's log: levels, the default sink, and how errors and URLs are written into it.

export type ServeLogLevel = 'info' | 'warn' | 'error';

export type ServeLog = (level: ServeLogLevel, message: string) => void;

export function defaultLog(level: ServeLogLevel, message: string): void {
  // stdout is the launcher's (it prints the URL there); diagnostics go to stderr.
  console.error(`[${level}] ${message}`);
}

export function pathOnly(url: string | undefined): string {
  // The event stream carries the token in its query: never let it reach a log.
  return (url ?? '/').split('?')[0] ?? '/';
}

export function describe(err: unknown): string {
  if (err instanceof Error) return err.stack ?? `${err.name}: ${err.message}`;
  return String(err);
}
