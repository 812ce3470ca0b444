// The editors' shared workings: a save (or any one action) runs one at a time with `busy` set, a
// refusal is kept for the form to show or reported as a toast, and the keyboard saves and cancels.
import { useEffect, useState, type KeyboardEvent, type RefObject } from 'react';

export interface BusyOptions {
  /** A failure is reported elsewhere (a toast) instead of kept in `error` for the form to show. */
  report?: (error: unknown) => void;
  /** After a kept failure the keyboard goes back here: the disabled button it pressed lost it. */
  refocus?: RefObject<HTMLElement | null>;
}

export function useBusy({ report, refocus }: BusyOptions = {}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const run = async (action: () => Promise<unknown>): Promise<void> => {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (err) {
      if (report) {
        report(err);
      } else {
        setError(err);
        if (refocus) requestAnimationFrame(() => refocus.current?.focus());
      }
    } finally {
      setBusy(false);
    }
  };

  return { busy, error, setError, run };
}

export interface EditorKeys {
  save: () => unknown;
  /** Escape; without it Escape is left alone. */
  cancel?: () => void;
  /** Ctrl/⌘ and this key save: Enter in the forms; S where the text is the whole page (the companion's blocks). */
  key?: 'Enter' | 's';
  /**
   * False: the save shortcut is left to the browser (Ctrl/⌘+S with nothing to save). The forms claim
   * Ctrl/⌘+Enter even when they cannot save yet, so it never reaches a focused button.
   */
  claim?: boolean;
}

/** A save: `saving` while it runs, and the keys that save and cancel (`onKeyDown={keys({ save, cancel })}`). */
export function useEditor(options: BusyOptions = {}) {
  const { busy, error, setError, run } = useBusy(options);

  const keys =
    ({ save, cancel, key = 'Enter', claim = true }: EditorKeys) =>
    (e: KeyboardEvent) => {
      if (e.key === key && (e.ctrlKey || e.metaKey)) {
        if (!claim) return;
        e.preventDefault();
        void save();
      } else if (e.key === 'Escape' && cancel) {
        e.preventDefault();
        cancel();
      }
    };

  return { saving: busy, error, setError, run, keys };
}

/** A textarea as tall as its text, between `min` and `max` pixels. */
export function useAutosize(ref: RefObject<HTMLTextAreaElement | null>, value: string, max = 360, min = 96) {
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    el.style.height = 'auto';
    el.style.height = `${Math.min(Math.max(el.scrollHeight, min), max)}px`;
  }, [ref, value, max, min]);
}

/** On opening, the keyboard is in the text, after its last character. */
export function useFocusAtEnd(ref: RefObject<HTMLTextAreaElement | null>) {
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    el.focus();
    el.setSelectionRange(el.value.length, el.value.length);
  }, [ref]);
}
