// Remembers the window's size, position and maximized state between launches. Pure logic plus a JSON
// file: no Electron here, so it is tested in plain Node. Displays come from screen.getAllDisplays().
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface WindowState {
  /** Absent on first launch or when the saved spot is off every screen: the OS then centres it. */
  x?: number;
  y?: number;
  width: number;
  height: number;
  maximized: boolean;
}

export interface DisplayLike {
  workArea: Rect;
}

export const DEFAULT_STATE: WindowState = { width: 1200, height: 800, maximized: false };
export const MIN_SIZE = { width: 480, height: 360 } as const;
/** How much of the window must stay on a screen for the user to grab it again. */
const MIN_VISIBLE = { width: 120, height: 48 } as const;

const FILE_NAME = 'window-state.json';

export function windowStateFile(userDataDir: string): string {
  return path.join(userDataDir, FILE_NAME);
}

function finite(n: unknown): n is number {
  return typeof n === 'number' && Number.isFinite(n);
}

/** Whatever is on disk (hand-edited, truncated, from an old version) becomes a valid state or the default. */
export function parseWindowState(raw: unknown): WindowState {
  if (!raw || typeof raw !== 'object') return { ...DEFAULT_STATE };
  const r = raw as Record<string, unknown>;
  const state: WindowState = {
    width: finite(r.width) ? Math.round(r.width) : DEFAULT_STATE.width,
    height: finite(r.height) ? Math.round(r.height) : DEFAULT_STATE.height,
    maximized: r.maximized === true,
  };
  if (finite(r.x) && finite(r.y)) {
    state.x = Math.round(r.x);
    state.y = Math.round(r.y);
  }
  return state;
}

function overlap(a: Rect, b: Rect): { width: number; height: number } {
  return {
    width: Math.max(0, Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x)),
    height: Math.max(0, Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y)),
  };
}

/**
 * Fit a saved state to the screens present now: a monitor may have been unplugged or the resolution
 * lowered since. The size never exceeds the largest work area; a window that would be (nearly) off
 * every screen loses its position; one that hangs partly off its screen is pulled back onto it.
 */
export function clampToDisplays(state: WindowState, displays: readonly DisplayLike[]): WindowState {
  if (displays.length === 0) return { ...state };
  const maxWidth = Math.max(...displays.map((d) => d.workArea.width));
  const maxHeight = Math.max(...displays.map((d) => d.workArea.height));
  const width = Math.max(Math.min(MIN_SIZE.width, maxWidth), Math.min(state.width, maxWidth));
  const height = Math.max(Math.min(MIN_SIZE.height, maxHeight), Math.min(state.height, maxHeight));
  const result: WindowState = { width, height, maximized: state.maximized };
  if (state.x === undefined || state.y === undefined) return result;

  const rect: Rect = { x: state.x, y: state.y, width, height };
  let best: { area: Rect; visible: number } | null = null;
  for (const { workArea } of displays) {
    const o = overlap(rect, workArea);
    if (o.width >= MIN_VISIBLE.width && o.height >= MIN_VISIBLE.height) {
      const visible = o.width * o.height;
      if (!best || visible > best.visible) best = { area: workArea, visible };
    }
  }
  if (!best) return result;

  const { area } = best;
  result.width = Math.min(width, area.width);
  result.height = Math.min(height, area.height);
  result.x = Math.min(Math.max(state.x, area.x), area.x + area.width - result.width);
  result.y = Math.min(Math.max(state.y, area.y), area.y + area.height - result.height);
  return result;
}

export async function loadWindowState(file: string, displays: readonly DisplayLike[]): Promise<WindowState> {
  let raw: unknown = null;
  try {
    raw = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    // Missing or unreadable: start from the default rather than fail to open a window.
  }
  return clampToDisplays(parseWindowState(raw), displays);
}

/** Written to a temporary file and renamed, so a crash mid-write never leaves half a file. */
export async function saveWindowState(file: string, state: WindowState): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(parseWindowState(state), null, 2)}\n`);
  await rename(tmp, file);
}

/** What to save from a window: its normal (unmaximized) bounds, so un-maximizing restores them. */
export function stateFromWindow(normalBounds: Rect, maximized: boolean): WindowState {
  return parseWindowState({ ...normalBounds, maximized });
}
