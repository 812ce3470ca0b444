// An HTTPS request as a paired phone makes it: a JSON body, a device token, the listener's own
// certificate as the only one trusted (none given: the system's, which refuse it).
import type { IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { TLSSocket } from 'node:tls';

export interface HttpsReply {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
  json: () => unknown;
  /** SHA-256 of the certificate the server showed. */
  fingerprint: string;
}

export interface HttpsTarget {
  /** What the client dials: an IP or a name. */
  host: string;
  port: number;
  /** The certificate to trust. */
  ca?: string;
  /** The name checked against the certificate, when not `host`. */
  servername?: string;
}

export interface HttpsCallOptions {
  token?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

export function httpsCall(target: HttpsTarget, method: string, urlPath: string, opts: HttpsCallOptions = {}): Promise<HttpsReply> {
  const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  const headers: Record<string, string> = { ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...opts.headers };
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ ...target, method, path: urlPath, headers, agent: false }, (res) => {
      const fingerprint = (res.socket as TLSSocket).getPeerCertificate().fingerprint256;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, json: () => JSON.parse(text), fingerprint });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}
