// The desktop window as a client of the person's own Anima server (shared/bridge.ts, DesktopShell):
// where this window's app is, and the few things the person can do about it — connect with a pairing
// link, open the remembered server again, come back to this computer, forget the server. The shell
// (window.animaDesktop) exists only in the desktop app; in a browser or on a phone there is none and
// nothing here shows. Its refusals come back as codes; the views choose the words.
import { create } from 'zustand';
import type { BridgeReply, DesktopShell, DesktopWhere } from '../../shared/bridge.js';

/** The refusals the shell names (useServer, reopenServer); anything else is `other`, with its message. */
export const REFUSAL_CODES = ['invalid_link', 'server_unreachable', 'certificate_mismatch'] as const;
export type RefusalCode = (typeof REFUSAL_CODES)[number] | 'other';

/** What the person asked for: each is one button (`retry` is the unreachable banner's "Try again"). */
export type DesktopAction = 'connect' | 'reopen' | 'retry' | 'thisComputer' | 'forget';

export interface DesktopRefusal {
  action: DesktopAction;
  code: RefusalCode;
  /** What the shell said, for the curious; never the only words shown. */
  message: string;
}

export interface DesktopState {
  /** null until the shell answered (and always without a shell). */
  where: DesktopWhere | null;
  /** The action under way; the others wait for it. */
  busy: DesktopAction | null;
  refusal: DesktopRefusal | null;
  /** The person closed the "your server did not answer" banner. */
  unreachableDismissed: boolean;
  /** The shell did not say where this window is (the app goes on as if there were no shell). */
  whereFailed: boolean;

  load(): Promise<void>;
  /** Checks the pairing link and, when the shell takes it, the window goes to the server. */
  connect(link: string): Promise<void>;
  reopen(action?: 'reopen' | 'retry'): Promise<void>;
  backToThisComputer(): Promise<void>;
  forget(): Promise<void>;
  dismissUnreachable(): void;
  clearRefusal(): void;
}

let override: DesktopShell | null | undefined;

/** The desktop shell of this window, or null outside the desktop app. */
export function desktopShell(): DesktopShell | null {
  if (override !== undefined) return override;
  return (typeof window !== 'undefined' && window.animaDesktop) || null;
}

/** Tests stand a shell of their own in for the preload's (undefined: back to window.animaDesktop). */
export function setDesktopShell(shell: DesktopShell | null | undefined): void {
  override = shell;
}

export function refusalCode(code: unknown): RefusalCode {
  return (REFUSAL_CODES as readonly unknown[]).includes(code) ? (code as RefusalCode) : 'other';
}

function refusalFrom(action: DesktopAction, err: unknown): DesktopRefusal {
  if (err && typeof err === 'object' && 'code' in err) {
    const e = err as { code: unknown; message?: unknown };
    return { action, code: refusalCode(e.code), message: typeof e.message === 'string' ? e.message : '' };
  }
  return { action, code: 'other', message: err instanceof Error ? err.message : String(err) };
}

export const useDesktop = create<DesktopState>()((set, get) => {
  /**
   * Runs one action on the shell: nothing while another runs, and a refusal in the state instead of a
   * throw. `leaves`: on success the window loads another page, so it stays busy until it goes.
   */
  async function run(action: DesktopAction, work: (shell: DesktopShell) => Promise<BridgeReply | void>, leaves: boolean): Promise<void> {
    const shell = desktopShell();
    if (!shell || get().busy) return;
    set({ busy: action, refusal: null });
    try {
      const reply = await work(shell);
      if (reply && !reply.ok) {
        set({ busy: null, refusal: refusalFrom(action, reply.error) });
        return;
      }
      if (!leaves) {
        set({ busy: null });
        await get().load();
      }
    } catch (err) {
      set({ busy: null, refusal: refusalFrom(action, err) });
    }
  }

  return {
    where: null,
    busy: null,
    refusal: null,
    unreachableDismissed: false,
    whereFailed: false,

    async load() {
      const shell = desktopShell();
      if (!shell) return;
      try {
        set({ where: await shell.where(), whereFailed: false });
      } catch {
        // No answer from the shell: nothing of this shows, the app itself goes on.
        if (!get().where) set({ whereFailed: true });
      }
    },

    async connect(link) {
      const trimmed = link.trim();
      if (!trimmed) {
        if (desktopShell() && !get().busy) set({ refusal: { action: 'connect', code: 'invalid_link', message: '' } });
        return;
      }
      await run('connect', (shell) => shell.useServer(trimmed), true);
    },

    async reopen(action = 'reopen') {
      await run(action, (shell) => shell.reopenServer(), true);
    },

    async backToThisComputer() {
      await run('thisComputer', (shell) => shell.useThisComputer(), true);
    },

    async forget() {
      await run('forget', (shell) => shell.forgetServer(), false);
    },

    dismissUnreachable() {
      set({ unreachableDismissed: true });
    },

    clearRefusal() {
      set({ refusal: null });
    },
  };
});
