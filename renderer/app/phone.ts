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
    // The tallest the visible area has been at this width: a keyboard takes a quarter of that or
    // more (a browser bar folding away takes far less), and only while one types in a field.
    let tallest = 0;
    let width = 0;
    const update = () => {
      root.style.setProperty('--app-h', `${Math.round(vv.height)}px`);
      if (vv.width !== width) {
        width = vv.width; // turned: start again
        tallest = 0;
      }
      tallest = Math.max(tallest, vv.height);
      const typing = document.activeElement?.matches('input, textarea, [contenteditable="true"]') ?? false;
      const keyboard = typing && vv.height < tallest * 0.75 && matchMedia(`${PHONE_QUERY} and (pointer: coarse)`).matches;
      if (keyboard) root.dataset.keyboard = 'open';
      else delete root.dataset.keyboard;
    };
    update();
    vv.addEventListener('resize', update);
    document.addEventListener('focusin', update);
    document.addEventListener('focusout', update);
    return () => {
      vv.removeEventListener('resize', update);
      document.removeEventListener('focusin', update);
      document.removeEventListener('focusout', update);
      root.style.removeProperty('--app-h');
      delete root.dataset.keyboard;
    };
  }, []);
}
