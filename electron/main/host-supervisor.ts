// Main's side of the host: forks the utility process, hands it one MessagePort per window, answers
// its safeStorage requests, restarts it once after a crash, and closes it (bounded) on quit — or stops
// it while the window is on the person's own server, to start it again when the window comes back.
import type { MessagePortMain, UtilityProcess } from 'electron';
import { answerCipherRequest, isMessage, type FromHost, type SafeStorageLike, type ToHost } from '../host-process/parent-channel.js';
import type { Log } from '../host-process/port-server.js';

export const CLOSE_TIMEOUT_MS = 5_000;
const MAX_RESTARTS = 1;

export interface HostExit {
  code: number;
  /** True when a fresh host was started in its place (windows need new ports). */
  restarted: boolean;
}

export interface HostSupervisorOptions {
  fork(): UtilityProcess;
  createChannel(): { port1: MessagePortMain; port2: MessagePortMain };
  dataDir: string;
  /** null when the OS keychain is unavailable: the host then keeps keys in an owner-only file. */
  safeStorage: SafeStorageLike | null;
  log: Log;
  onUnexpectedExit(exit: HostExit): void;
}

export class HostSupervisor {
  private child: UtilityProcess | null = null;
  private restarts = 0;
  private closing: Promise<void> | null = null;

  constructor(private readonly options: HostSupervisorOptions) {}

  get running(): boolean {
    return this.child !== null;
  }

  start(): void {
    if (this.child) throw new Error('the host is already running');
    const { fork, dataDir, safeStorage, log } = this.options;
    const child = fork();
    this.child = child;

    child.on('message', (message: unknown) => {
      if (!isMessage<FromHost>(message)) return;
      switch (message.type) {
        case 'cipher':
          // Should never happen when safeStorage is null (the host was told), but answer anyway.
          child.postMessage(
            safeStorage
              ? answerCipherRequest(safeStorage, message)
              : ({ type: 'cipher-result', id: message.id, ok: false, message: 'the OS keychain is not available' } satisfies ToHost),
          );
          break;
        case 'failed':
          log('error', `the host could not start: ${message.message}`);
          break;
        case 'ready':
          log('info', 'host ready');
          break;
        case 'closed':
          break;
      }
    });
    child.on('exit', (code) => this.exited(child, code));

    this.send({ type: 'init', dataDir, secretStorage: safeStorage ? 'os-encrypted' : 'owner-only-file' });
  }

  /** A new channel to the host; returns the renderer's end, or null when no host is running. */
  connect(): MessagePortMain | null {
    if (!this.child || this.closing) return null;
    const { port1, port2 } = this.options.createChannel();
    this.send({ type: 'connect' }, [port1]);
    return port2;
  }

  /** Lets the host settle streaming replies and close the database; kills it past the timeout. */
  close(timeoutMs = CLOSE_TIMEOUT_MS): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      const child = this.child;
      if (!child) return resolve();
      const timer = setTimeout(() => {
        this.options.log('warn', `the host did not close within ${timeoutMs / 1000} s; stopping it`);
        child.kill();
        resolve();
      }, timeoutMs);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      this.send({ type: 'close' });
    });
    return this.closing;
  }

  /**
   * Closes the host as close() does (the window is moving to the person's server: this computer's
   * data folder is let go), after which start() may run a fresh one, with its one restart again.
   */
  async stop(timeoutMs = CLOSE_TIMEOUT_MS): Promise<void> {
    const closing = this.close(timeoutMs);
    await closing;
    if (this.closing === closing && !this.child) {
      this.closing = null;
      this.restarts = 0;
    }
  }

  private send(message: ToHost, ports?: MessagePortMain[]): void {
    this.child?.postMessage(message, ports);
  }

  private exited(child: UtilityProcess, code: number): void {
    if (child !== this.child) return;
    this.child = null;
    if (this.closing) return;
    this.options.log('error', `the host process exited unexpectedly (code ${code})`);
    const restart = this.restarts < MAX_RESTARTS;
    if (restart) {
      this.restarts++;
      this.start();
    }
    this.options.onUnexpectedExit({ code, restarted: restart });
  }
}
