// Helpers shared by the provider tests (not used by the app).
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ProviderError, type StreamEvent } from './types.js';

export interface Collected {
  events: StreamEvent[];
  error?: ProviderError;
}

/** Drains a stream, keeping what it yielded before it failed. */
export async function collect(stream: AsyncIterable<StreamEvent>): Promise<Collected> {
  const events: StreamEvent[] = [];
  try {
    for await (const event of stream) events.push(event);
  } catch (error) {
    if (error instanceof ProviderError) return { events, error };
    throw error;
  }
  return { events };
}

export function textOf(events: StreamEvent[]): string {
  return events.flatMap((e) => (e.type === 'text' ? [e.text] : [])).join('');
}

export function reasoningOf(events: StreamEvent[]): string {
  return events.flatMap((e) => (e.type === 'reasoning' ? [e.text] : [])).join('');
}

const wireDirs: string[] = [];

/** Writes a made-up wire body to a temporary file the fake server can replay. */
export function wireFile(name: string, content: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-llm-wire-'));
  wireDirs.push(dir);
  const file = path.join(dir, name);
  fs.writeFileSync(file, content);
  return file;
}

export function removeWireFiles(): void {
  for (const dir of wireDirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

/** SSE framing for made-up OpenAI-compatible chunks. */
export function sse(...payloads: (object | string)[]): string {
  return payloads.map((p) => `data: ${typeof p === 'string' ? p : JSON.stringify(p)}\n\n`).join('');
}

/** A loopback port nothing listens on. */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
