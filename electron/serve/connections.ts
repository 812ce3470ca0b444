// The server's sockets: which have a request in progress (so close() can let those finish and
// cut the rest), and the answer to a request too broken to reach a handler.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Server as NetServer, Socket } from 'node:net';

export interface Connections {
  /** Counts `req` as in progress on its socket until `res` closes. */
  track(req: IncomingMessage, res: ServerResponse): void;
  /** Destroys every idle socket now, and from now on each socket the moment its last request ends. */
  drain(): void;
  /** Destroys every socket, in progress or not. */
  destroyAll(): void;
}

/** `connectionEvent`: 'secureConnection' for an HTTPS server, whose requests ride the TLS socket, not the raw one. */
export function trackConnections(server: Server | import('node:tls').Server, connectionEvent: 'connection' | 'secureConnection' = 'connection'): Connections {
  // Requests in progress per socket. close() destroys a socket the moment it has none: Node's own
  // idle tracking misses sockets whose client went away half-open (an aborted event stream), and
  // those would hold close() until the grace period ran out.
  const sockets = new Map<Socket, number>();
  let draining = false;

  server.on(connectionEvent, (socket: Socket) => {
    sockets.set(socket, 0);
    socket.once('close', () => sockets.delete(socket));
  });

  return {
    track(req, res) {
      const socket = req.socket;
      const before = sockets.get(socket);
      if (before !== undefined) sockets.set(socket, before + 1);
      res.once('close', () => {
        const current = sockets.get(socket);
        if (current === undefined) return;
        sockets.set(socket, current - 1);
        if (draining && current - 1 <= 0) socket.destroy();
      });
    },
    drain() {
      draining = true;
      for (const [socket, active] of sockets) if (active === 0) socket.destroy();
    },
    destroyAll() {
      for (const socket of sockets.keys()) socket.destroy();
    },
  };
}

/** For the server's clientError: a peer that vanishes mid-request raises it; answer if we can, never crash. */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  const code = err.code ?? '';
  if (!socket.writable || code.startsWith('ECONN')) {
    socket.destroy();
    return;
  }
  const status =
    code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : '400 Bad Request';
  socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

/** Starts `server` listening on host:port; resolves once it listens, rejects with the error that stopped it (EADDRINUSE …). */
export function listenOn(server: NetServer, host: string, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (err: Error) => {
      server.off('listening', onListening);
      reject(err);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen({ host, port });
  });
}
