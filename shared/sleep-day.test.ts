import { describe, expect, it } from 'vitest';
import { isValidTimeZone, sleepDay } from './sleep-day.js';

describe('sleepDay', () => {
  it('keeps the small hours before the sleep time in the previous day', () => {
    // 01:30 in Berlin on 3 Dec (00:30 UTC) is still the sleep day of 2 Dec.
    expect(sleepDay(new Date('2026-12-03T00:30:00Z'), '02:00', 'Europe/Berlin')).toBe('2026-12-02');
    // 02:00 exactly starts the new day.
    expect(sleepDay(new Date('2026-12-03T01:00:00Z'), '02:00', 'Europe/Berlin')).toBe('2026-12-03');
  });

  it('uses the configured time zone, not the machine’s', () => {
    const at = new Date('2026-12-02T20:00:00Z');
    expect(sleepDay(at, '02:00', 'Asia/Shanghai')).toBe('2026-12-03'); // 04:00 local
    expect(sleepDay(at, '02:00', 'America/Los_Angeles')).toBe('2026-12-02'); // 12:00 local
  });

  it('crosses month and year boundaries', () => {
    expect(sleepDay(new Date('2027-01-01T00:59:00Z'), '02:00', 'UTC')).toBe('2026-12-31');
    expect(sleepDay(new Date('2026-03-01T01:00:00Z'), '04:30', 'UTC')).toBe('2026-02-28');
  });

  it('honours a sleep time of midnight', () => {
    expect(sleepDay(new Date('2026-12-02T00:00:00Z'), '00:00', 'UTC')).toBe('2026-12-02');
  });

  it('validates time zones', () => {
    expect(isValidTimeZone('Europe/Berlin')).toBe(true);
    expect(isValidTimeZone('Mars/Olympus')).toBe(false);
  });
});
