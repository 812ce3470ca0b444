// The one shape of a log function the host, its services and the processes around it share.
export type LogLevel = 'info' | 'warn' | 'error';
export type Log = (level: LogLevel, message: string) => void;
