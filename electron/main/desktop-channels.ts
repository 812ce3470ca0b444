// The IPC channels of window.animaDesktop (shared/bridge.ts DesktopShell): the preload invokes them,
// main.ts handles them. No imports: the sandboxed preload bundles this file.
export const DESKTOP_CHANNELS = {
  where: 'anima-desktop:where',
  useServer: 'anima-desktop:use-server',
  reopenServer: 'anima-desktop:reopen-server',
  useThisComputer: 'anima-desktop:use-this-computer',
  forgetServer: 'anima-desktop:forget-server',
} as const;
