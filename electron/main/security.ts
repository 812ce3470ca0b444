// Wires the rules of security-rules.ts into Electron, once, for every web contents and the session.
// Numbers refer to https://www.electronjs.org/docs/latest/tutorial/security.
import type { Session, WebContents } from 'electron';
import { checkExternalUrl, isAllowedNavigation, isPermissionAllowed } from './security-rules.js';

/** Open a link in the system browser if it passes the checks; returns whether it did. */
export type OpenExternal = (url: string) => boolean;

export function createOpenExternal(shellOpenExternal: (url: string) => Promise<void>, log: (message: string) => void): OpenExternal {
  return (raw) => {
    const url = checkExternalUrl(raw);
    if (!url) {
      log(`refused to open a link that is not a plain http(s) URL: ${String(raw).slice(0, 200)}`);
      return false;
    }
    shellOpenExternal(url).catch((err: Error) => log(`could not open ${url}: ${err.message}`));
    return true;
  };
}

/** Where the window is allowed to be: null for our own app:// pages, else the paired server's origin. */
export type ServerOrigin = () => string | null;

/**
 * #13 navigation locked to app:// (or, while the window is on the paired server, to its origin alone),
 * #14 no new windows, #12 no <webview>; links go to the browser.
 */
export function hardenWebContents(contents: WebContents, openExternal: OpenExternal, serverOrigin: ServerOrigin = () => null): void {
  contents.on('will-frame-navigate', (details) => {
    if (isAllowedNavigation(details.url, serverOrigin())) return;
    details.preventDefault();
    if (details.isMainFrame) openExternal(details.url);
  });
  contents.on('will-redirect', (details) => {
    if (!isAllowedNavigation(details.url, serverOrigin())) details.preventDefault();
  });
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler(({ url }) => {
    openExternal(url);
    return { action: 'deny' };
  });
}

/** #5: deny every permission that is not explicitly allowed, both when asked and when checked. */
export function lockPermissions(session: Session, serverOrigin: ServerOrigin = () => null): void {
  session.setPermissionRequestHandler((_contents, permission, callback, details) => {
    callback(isPermissionAllowed(permission, details.requestingUrl, serverOrigin()));
  });
  session.setPermissionCheckHandler((_contents, permission, requestingOrigin) => isPermissionAllowed(permission, requestingOrigin, serverOrigin()));
  session.setDevicePermissionHandler(() => false);
}
