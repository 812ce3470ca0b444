import { useEffect } from 'react';
import { useMediaQuery } from './hooks.js';

/** The phone layout's breakpoint; renderer/styles/phone.css uses the same width. */
export const PHONE_QUERY = '(max-width: 640px)';

/** True on a narrow screen (a phone, or a window made that narrow). */
export function useIsPhone(): boolean {
  return useMediaQuery(PHONE_QUERY);
}

/**
 * Keeps `--app-h` on <html> at the visible height and `data-keyboard="open"` while an on-screen
 * keyboard covers part of the page, so the composer stays above the keyboard where the browser does
 * not resize the layout for it (iOS Safari), and the tab bar steps aside while one types.
 * CSSOM only (no style attribute): the Content-Security-Policy allows it.
 */
export function useVisualViewport(): void {
  useEffect(() => {
    const vv = window.visualViewport;
    if (!vv) return;
    const root = document.documentElement;
    const update = () => {
      root.style.setProperty('--app-h', `${Math.round(vv.height)}px`);
      // A keyboard takes a quarter of the screen or more; a browser bar folding away takes far less.
      const keyboard = vv.height < window.innerHeight * 0.75 || window.innerHeight < screen.height * 0.6;
      if (keyboard && matchMedia(`${PHONE_QUERY} and (pointer: coarse)`).matches) root.dataset.keyboard = 'open';
      else delete root.dataset.keyboard;
    };
    update();
    vv.addEventListener('resize', update);
    return () => {
      vv.removeEventListener('resize', update);
      root.style.removeProperty('--app-h');
      delete root.dataset.keyboard;
    };
  }, []);
}
