import { describe, expect, it } from 'vitest';
import { monthSpan, percentOf, previewReach, toBase64 } from './import.js';

describe('import store helpers', () => {
  it('encodes bytes as base64 the way the host decodes them, also past the 32 kB slices', () => {
    const bytes = new Uint8Array(100_000).map((_, i) => (i * 7919) % 256);
    expect(Buffer.from(toBase64(bytes), 'base64').equals(Buffer.from(bytes))).toBe(true);
    expect(toBase64(new TextEncoder().encode('月纱 — ok'))).toBe(Buffer.from('月纱 — ok').toString('base64'));
    expect(toBase64(new Uint8Array())).toBe('');
  });

  it('says whole percents, never past 100 and never from nothing', () => {
    expect(percentOf(0, 0)).toBe(0);
    expect(percentOf(1, 3)).toBe(33);
    expect(percentOf(499, 500)).toBe(99);
    expect(percentOf(7, 5)).toBe(100);
  });

  it('names the first and last month in the person’s language, in UTC', () => {
    expect(monthSpan({ from: '2023-04-02T10:00:00Z', to: '2026-11-30T23:59:00Z' }, 'en-US')).toEqual({ from: 'Apr 2023', to: 'Nov 2026', same: false });
    expect(monthSpan({ from: '2024-05-01T00:30:00Z', to: '2024-05-31T23:00:00Z' }, 'zh-CN')).toEqual({ from: '2024年5月', to: '2024年5月', same: true });
    expect(monthSpan({ from: null, to: null }, 'en-US')).toBeNull();
  });

  it('counts a conversation the file carries further as something to import, not as already here', () => {
    // All three here already, two grown: importable, one skipped.
    expect(previewReach({ conversations: 3, alreadyImported: 3, grown: 2, newVersions: 0 })).toEqual({
      grown: 2,
      newVersions: 0,
      skipped: 1,
      nothingNew: false,
    });
    // Only the last answer differs in one: still something to import.
    expect(previewReach({ conversations: 1, alreadyImported: 1, grown: 0, newVersions: 1 }).nothingNew).toBe(false);
    // All here and the same (an older host's preview has no grown count): nothing new.
    expect(previewReach({ conversations: 2, alreadyImported: 2 })).toEqual({ grown: 0, newVersions: 0, skipped: 2, nothingNew: true });
    expect(previewReach({ conversations: 4, alreadyImported: 1, grown: 0 }).nothingNew).toBe(false);
  });
});
