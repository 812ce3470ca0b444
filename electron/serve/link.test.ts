// Browser mode's address per data folder, over real loopback HTTP with a real host: two starts on
// the same folder serve the same port and token; a port taken meanwhile moves to a free one (said,
// and remembered); "Reset the browser link" refuses the old token at once and ends open streams.
import fs from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestHost, tempDataDir } from '../testing/host.js';
import { PATIENCE_MS } from '../testing/patience.js';
import type { Host } from '../host/types.js';
import { BrowserLink, LINK_FILE } from './link.js';
import { startServer, type RunningServer } from './server.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

function folders() {
  const dataDir = tempDataDir('anima-link-');
  const staticDir = fs.mkdtempSync(path.join(path.dirname(dataDir), 'anima-link-static-'));
  fs.writeFileSync(path.join(staticDir, 'index.html'), '<!doctype html><title>Anima</title>');
  cleanup.push(async () => {
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(staticDir, { recursive: true, force: true });
  });
  return { dataDir, staticDir };
}

/** What `anima serve` does: the folder's link, a host, the server. */
async function serve(
  dataDir: string,
  staticDir: string,
  port?: number,
  lan?: { address: string },
): Promise<{ host: Host; server: RunningServer; stop: () => Promise<void> }> {
  const link = new BrowserLink(dataDir);
  const host = await startTestHost({ dataDir, browserLink: link });
  await link.load();
  const server = await startServer({ host, staticDir, port, link, lan, log: () => {} });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await server.close();
    await host.close();
  };
  cleanup.push(stop);
  return { host, server, stop };
}

const call = (origin: string, token: string, method: string) =>
  fetch(`${origin}/api/call/${method}`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: '{}' });

describe('the address of a data folder', () => {
  it(
    'is the same port and token at the next start, and the old link still works',
    async () => {
      const { dataDir, staticDir } = folders();
      const first = await serve(dataDir, staticDir);
      const { port, token, url } = first.server;
      expect((await call(first.server.origin, token, 'app.info')).status).toBe(200);
      await first.stop();

      // Kept beside the data, readable by its owner only.
      const file = path.join(dataDir, LINK_FILE);
      expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({ port, token });
      if (process.platform !== 'win32') expect(fs.statSync(file).mode & 0o777).toBe(0o600);

      const second = await serve(dataDir, staticDir);
      expect(second.server.port).toBe(port);
      expect(second.server.token).toBe(token);
      expect(second.server.url).toBe(url);
      expect(second.server.movedFrom).toBeNull();
      expect((await call(second.server.origin, token, 'app.info')).status).toBe(200);
    },
    PATIENCE_MS * 2,
  );

  it(
    'moves to a free port when its own is taken by another program, says so, and keeps the new one',
    async () => {
      const { dataDir, staticDir } = folders();
      const first = await serve(dataDir, staticDir);
      const { port, token } = first.server;
      await first.stop();

      const squatter = createServer();
      await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', resolve));
      cleanup.push(() => new Promise<void>((resolve) => squatter.close(() => resolve())));

      const second = await serve(dataDir, staticDir);
      expect(second.server.port).not.toBe(port);
      expect(second.server.movedFrom).toBe(port);
      expect(second.server.token).toBe(token);
      expect(JSON.parse(fs.readFileSync(path.join(dataDir, LINK_FILE), 'utf8'))).toEqual({ port: second.server.port, token });
    },
    PATIENCE_MS * 2,
  );

  it(
    'keeps the LAN listener on its port too: one that had to move is found there at the next start, where paired devices are',
    async () => {
      const { dataDir, staticDir } = folders();
      const first = await serve(dataDir, staticDir);
      const { port } = first.server;
      await first.stop();

      // The LAN listener's usual port (the loopback one + 1) is taken the first time it serves.
      const squatter = createServer();
      await new Promise<void>((resolve) => squatter.listen(port + 1, '127.0.0.1', resolve));
      const second = await serve(dataDir, staticDir, undefined, { address: '127.0.0.1' });
      const lanPort = second.server.lan!.port;
      expect(lanPort).not.toBe(port + 1);
      expect(JSON.parse(fs.readFileSync(path.join(dataDir, LINK_FILE), 'utf8'))).toMatchObject({ port, lanPort });
      await second.stop();
      await new Promise<void>((resolve) => squatter.close(() => resolve()));

      // Its usual port is free again, yet it comes back where the devices know it.
      const third = await serve(dataDir, staticDir, undefined, { address: '127.0.0.1' });
      expect(third.server.port).toBe(port);
      expect(third.server.lan!.port).toBe(lanPort);
    },
    PATIENCE_MS * 3,
  );

  it(
    'an explicit port wins over the remembered one',
    async () => {
      const { dataDir, staticDir } = folders();
      const first = await serve(dataDir, staticDir);
      await first.stop();
      const second = await serve(dataDir, staticDir, 0);
      expect(second.server.token).toBe(first.server.token);
      expect(second.server.movedFrom).toBeNull();
    },
    PATIENCE_MS * 2,
  );

  it(
    'a reset refuses the old token at once, ends open event streams, and lasts across a restart',
    async () => {
      const { dataDir, staticDir } = folders();
      const { server, stop } = await serve(dataDir, staticDir);
      const old = server.token;
      const controller = new AbortController();
      const events = await fetch(`${server.origin}/api/events?token=${old}`, { signal: controller.signal });
      expect(events.status).toBe(200);
      const reading = (async () => {
        for await (const chunk of events.body!) void chunk;
      })();

      const reset = await call(server.origin, old, 'app.resetBrowserLink');
      expect(reset.status).toBe(200);
      const { token } = (await reset.json()) as { token: string };
      expect(token).not.toBe(old);
      await reading; // the server ended the open stream
      expect((await call(server.origin, old, 'app.info')).status).toBe(401);
      expect((await fetch(`${server.origin}/api/events?token=${old}`)).status).toBe(401);
      expect((await call(server.origin, token, 'app.info')).status).toBe(200);
      expect(server.url).toContain(token);

      await stop();
      const again = await serve(dataDir, staticDir);
      expect(again.server.token).toBe(token);
      expect((await call(again.server.origin, old, 'app.info')).status).toBe(401);
    },
    PATIENCE_MS * 2,
  );

  it(
    'a host without a link (the desktop app) refuses the reset in words',
    async () => {
      const host = await startTestHost();
      cleanup.push(() => host.close());
      await expect(host.api['app.resetBrowserLink']({})).rejects.toMatchObject({ code: 'conflict', message: expect.stringMatching(/browser/) as unknown });
    },
    PATIENCE_MS,
  );
});
