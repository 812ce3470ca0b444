import { describe, expect, it } from 'vitest';
import { isValidTimeZone, nextDay, sleepDay, sleepDayStart } from './sleep-day.js';

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

describe('sleepDayStart', () => {
  /** The start must be exactly where sleepDay() turns: the minute before still belongs to the day before. */
  function expectTurnsAt(day: string, sleepTime: string, timeZone: string, iso: string) {
    const start = sleepDayStart(day, sleepTime, timeZone);
    expect(start.toISOString()).toBe(iso);
    expect(sleepDay(start, sleepTime, timeZone)).toBe(day);
    expect(sleepDay(new Date(start.getTime() - 60_000), sleepTime, timeZone)).toBe(nextDay(day, -1));
  }

  it('is the sleep time, local, on an ordinary day', () => {
    expectTurnsAt('2026-12-03', '02:00', 'Europe/Berlin', '2026-12-03T01:00:00.000Z'); // CET, UTC+1
    expectTurnsAt('2026-07-01', '02:00', 'Europe/Berlin', '2026-07-01T00:00:00.000Z'); // CEST, UTC+2
    expectTurnsAt('2026-07-01', '02:00', 'Asia/Tokyo', '2026-06-30T17:00:00.000Z');
    expectTurnsAt('2026-07-01', '04:30', 'America/Los_Angeles', '2026-07-01T11:30:00.000Z');
    expectTurnsAt('2026-07-01', '00:00', 'UTC', '2026-07-01T00:00:00.000Z');
  });

  it('starts when the clocks jump past a sleep time that does not exist (spring forward)', () => {
    // Berlin, 29 Mar 2026: 02:00 CET becomes 03:00 CEST at 01:00 UTC.
    expectTurnsAt('2026-03-29', '02:00', 'Europe/Berlin', '2026-03-29T01:00:00.000Z');
    expectTurnsAt('2026-03-29', '02:30', 'Europe/Berlin', '2026-03-29T01:00:00.000Z');
    // New York, 8 Mar 2026: 02:00 EST becomes 03:00 EDT at 07:00 UTC (not an hour early, at 01:00 EST).
    expectTurnsAt('2026-03-08', '02:00', 'America/New_York', '2026-03-08T07:00:00.000Z');
    expectTurnsAt('2026-03-08', '02:30', 'America/New_York', '2026-03-08T07:00:00.000Z');
  });

  it('starts at the first of two identical sleep times (fall back)', () => {
    // Berlin, 25 Oct 2026: 02:00 happens at 00:00 UTC (CEST) and again at 01:00 UTC (CET).
    expectTurnsAt('2026-10-25', '02:00', 'Europe/Berlin', '2026-10-25T00:00:00.000Z');
    // New York, 1 Nov 2026: 01:30 happens at 05:30 UTC (EDT) and again at 06:30 UTC (EST).
    expectTurnsAt('2026-11-01', '01:30', 'America/New_York', '2026-11-01T05:30:00.000Z');
  });

  it('makes days of 23 and 25 hours around the changes, and 24 otherwise', () => {
    const hours = (day: string, zone: string) =>
      (sleepDayStart(nextDay(day), '02:00', zone).getTime() - sleepDayStart(day, '02:00', zone).getTime()) / 3_600_000;
    // The change happens at the sleep time itself, so it lands in the day that begins then.
    expect(hours('2026-03-28', 'Europe/Berlin')).toBe(24);
    expect(hours('2026-03-29', 'Europe/Berlin')).toBe(23);
    expect(hours('2026-10-24', 'Europe/Berlin')).toBe(24);
    expect(hours('2026-10-25', 'Europe/Berlin')).toBe(25);
    expect(hours('2026-10-24', 'Asia/Tokyo')).toBe(24);
  });
});

describe('nextDay', () => {
  it('steps calendar days across months, years and leap days', () => {
    expect(nextDay('2026-12-31')).toBe('2027-01-01');
    expect(nextDay('2028-02-28')).toBe('2028-02-29');
    expect(nextDay('2027-02-28')).toBe('2027-03-01');
    expect(nextDay('2026-03-01', -1)).toBe('2026-02-28');
    expect(nextDay('2026-01-01', -3)).toBe('2025-12-29');
    expect(nextDay('2026-10-24', 7)).toBe('2026-10-31');
  });

  it('is plain calendar arithmetic, untouched by daylight saving', () => {
    expect(nextDay('2026-03-28')).toBe('2026-03-29');
    expect(nextDay('2026-03-29')).toBe('2026-03-30');
    expect(nextDay('2026-10-25', -1)).toBe('2026-10-24');
  });
});
