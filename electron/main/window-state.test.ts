import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_STATE,
  MIN_SIZE,
  clampToDisplays,
  loadWindowState,
  parseWindowState,
  saveWindowState,
  stateFromWindow,
  windowStateFile,
  type DisplayLike,
} from './window-state.js';

const laptop: DisplayLike = { workArea: { x: 0, y: 0, width: 1440, height: 875 } };
// A second monitor to the right of the laptop.
const monitor: DisplayLike = { workArea: { x: 1440, y: 0, width: 2560, height: 1415 } };

describe('parseWindowState', () => {
  it('falls back to the default for garbage', () => {
    expect(parseWindowState(null)).toEqual(DEFAULT_STATE);
    expect(parseWindowState('x')).toEqual(DEFAULT_STATE);
    expect(parseWindowState({ width: 'wide', height: NaN, maximized: 'yes' })).toEqual(DEFAULT_STATE);
  });

  it('keeps a position only when both coordinates are numbers', () => {
    expect(parseWindowState({ width: 900, height: 700, x: 10 })).toEqual({ width: 900, height: 700, maximized: false });
    expect(parseWindowState({ width: 900.4, height: 700, x: 10.6, y: -5, maximized: true })).toEqual({
      width: 900,
      height: 700,
      x: 11,
      y: -5,
      maximized: true,
    });
  });
});

describe('clampToDisplays', () => {
  it('keeps a window that fits', () => {
    const s = { x: 100, y: 50, width: 1000, height: 700, maximized: false };
    expect(clampToDisplays(s, [laptop])).toEqual(s);
  });

  it('keeps a window on the second monitor while it is plugged in', () => {
    const s = { x: 2000, y: 100, width: 1600, height: 1000, maximized: true };
    expect(clampToDisplays(s, [laptop, monitor])).toEqual(s);
  });

  it('forgets the position when the monitor it was on is gone', () => {
    const s = { x: 2000, y: 100, width: 1600, height: 1000, maximized: false };
    expect(clampToDisplays(s, [laptop])).toEqual({ width: 1440, height: 875, maximized: false });
  });

  it('pulls a window that hangs off the edge back onto its screen', () => {
    const s = { x: 1000, y: 600, width: 1000, height: 700, maximized: false };
    expect(clampToDisplays(s, [laptop])).toEqual({ x: 440, y: 175, width: 1000, height: 700, maximized: false });
  });

  it('drops a position with only a sliver on screen', () => {
    const s = { x: 1400, y: 0, width: 800, height: 600, maximized: false };
    expect(clampToDisplays(s, [laptop])).toEqual({ width: 800, height: 600, maximized: false });
  });

  it('shrinks a window larger than every screen and enforces a minimum size', () => {
    expect(clampToDisplays({ width: 5000, height: 4000, maximized: false }, [laptop])).toEqual({
      width: 1440,
      height: 875,
      maximized: false,
    });
    expect(clampToDisplays({ width: 10, height: 10, maximized: false }, [laptop])).toEqual({
      ...MIN_SIZE,
      maximized: false,
    });
  });

  it('handles screens at negative coordinates', () => {
    const left: DisplayLike = { workArea: { x: -1920, y: 0, width: 1920, height: 1050 } };
    const s = { x: -1800, y: 20, width: 1000, height: 800, maximized: false };
    expect(clampToDisplays(s, [laptop, left])).toEqual(s);
  });

  it('leaves the state alone when no display is known', () => {
    const s = { x: 5, y: 5, width: 700, height: 500, maximized: false };
    expect(clampToDisplays(s, [])).toEqual(s);
  });
});

describe('load and save', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'anima-window-state-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('round-trips through the JSON file in the user data dir', async () => {
    const file = windowStateFile(path.join(dir, 'nested'));
    await saveWindowState(file, stateFromWindow({ x: 30, y: 40, width: 1000, height: 700 }, true));
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ x: 30, y: 40, width: 1000, height: 700, maximized: true });
    expect(await loadWindowState(file, [laptop])).toEqual({ x: 30, y: 40, width: 1000, height: 700, maximized: true });
  });

  it('starts from the default when the file is missing or corrupt', async () => {
    const file = windowStateFile(dir);
    expect(await loadWindowState(file, [laptop])).toEqual(DEFAULT_STATE);
    await writeFile(file, '{"width": 9');
    expect(await loadWindowState(file, [laptop])).toEqual(DEFAULT_STATE);
  });
});
