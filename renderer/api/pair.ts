// The phone side of pairing: POST /api/pair on the LAN listener with the one-time secret from the
// pairing address and a name for this device; the answer is this device's own token.
import type { PairResult } from '../../shared/api.js';
import { errorFromResponse } from './http.js';

export async function pairThisDevice(secret: string, name: string, doFetch: typeof fetch = (input, init) => fetch(input, init)): Promise<PairResult> {
  const response = await doFetch('/api/pair', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ secret, name }),
  });
  const text = await response.text();
  if (!response.ok) throw errorFromResponse(response.status, text);
  return JSON.parse(text) as PairResult;
}
