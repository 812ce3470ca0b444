// Writing responses: the headers every response carries, JSON bodies, and error replies.
import type { ServerResponse } from 'node:http';

import type { ApiErrorShape } from '../../shared/api.js';

/** What an error response says when the real reason stays in the log. */
export const INTERNAL_MESSAGE = 'Something went wrong inside Anima. The details are in the log.';

/** An error reply: its status, its {error} body and any headers it needs (Allow, Connection). */
export interface Refusal {
  kind: 'refused';
  status: number;
  error: ApiErrorShape;
  headers?: Readonly<Record<string, string>>;
}

export function refusal(status: number, error: ApiErrorShape, headers?: Readonly<Record<string, string>>): Refusal {
  return headers ? { kind: 'refused', status, error, headers } : { kind: 'refused', status, error };
}

export function setCommonHeaders(res: ServerResponse): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  // Stops other sites embedding our files with no-cors requests (<script src>, <img>).
  res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
}

export function sendJson(res: ServerResponse, status: number, json: string): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(json),
    'Cache-Control': 'no-store',
  });
  res.end(json);
}

export function sendError(res: ServerResponse, status: number, error: ApiErrorShape): void {
  sendJson(res, status, JSON.stringify({ error }));
}

export function refuse(res: ServerResponse, { status, error, headers }: Refusal): void {
  for (const [name, value] of Object.entries(headers ?? {})) res.setHeader(name, value);
  sendError(res, status, error);
}
