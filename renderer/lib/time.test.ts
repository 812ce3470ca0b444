import { describe, expect, it } from 'vitest';
import { calendarDaysBetween, formatDay, formatWhen, partOfDay, type TimeLabels } from './time.js';

const labels: TimeLabels = {
  justNow: 'just now',
  yesterdayEarly: 'early yesterday morning',
  yesterdayMorning: 'yesterday morning',
  yesterdayAfternoon: 'yesterday afternoon',
  yesterdayEvening: 'yesterday evening',
  yesterdayNight: 'last night',
};

const now = new Date('2025-03-12T15:00:00Z'); // 16:00 in Berlin (CET), a Wednesday

function when(iso: string, extra: Partial<Parameters<typeof formatWhen>[1]> = {}) {
  return formatWhen(iso, { now, locale: 'en-GB', timeZone: 'Europe/Berlin', labels, ...extra });
}

describe('formatWhen', () => {
  it('says "just now" for the last few seconds and for small clock skew', () => {
    expect(when('2025-03-12T14:59:30Z')).toBe('just now');
    expect(when('2025-03-12T15:00:05Z')).toBe('just now');
  });

  it('counts minutes within the hour', () => {
    expect(when('2025-03-12T14:55:00Z')).toBe('5 minutes ago');
    expect(when('2025-03-12T14:59:00Z')).toBe('1 minute ago');
  });

  it('counts hours earlier today, or gives the clock time when asked for it', () => {
    expect(when('2025-03-12T12:00:00Z')).toBe('3 hours ago');
    expect(when('2025-03-12T12:00:00Z', { withTime: true })).toBe('13:00');
    expect(when('2025-03-12T07:30:00Z')).toBe('08:30');
  });

  it('names the part of yesterday in the configured zone', () => {
    expect(when('2025-03-11T18:30:00Z')).toBe('yesterday evening'); // 19:30 Berlin
    expect(when('2025-03-11T08:00:00Z')).toBe('yesterday morning');
    expect(when('2025-03-11T21:30:00Z')).toBe('last night');
    expect(when('2025-03-11T18:30:00Z', { withTime: true })).toBe('yesterday evening · 19:30');
  });

  it('uses the configured time zone for the day boundary', () => {
    // 23:30 UTC on the 11th is already the 12th in Berlin, but still the 11th in New York.
    expect(when('2025-03-11T23:30:00Z')).toBe('00:30');
    expect(formatWhen('2025-03-11T23:30:00Z', { now, locale: 'en-US', timeZone: 'America/New_York', labels })).toBe('yesterday evening');
  });

  it('uses the weekday within a week and a date after that', () => {
    expect(when('2025-03-08T10:00:00Z')).toBe('Saturday');
    expect(when('2025-02-20T10:00:00Z')).toBe('20 Feb');
    expect(when('2024-12-20T10:00:00Z')).toBe('20 Dec 2024');
  });

  it('speaks Chinese when the locale is Chinese', () => {
    const zh = (iso: string) => formatWhen(iso, { now, locale: 'zh-CN', timeZone: 'Asia/Shanghai', labels: { ...labels, yesterdayEvening: '昨天傍晚' } });
    expect(zh('2025-03-12T14:55:00Z')).toBe('5分钟前');
    expect(zh('2025-03-11T10:30:00Z')).toBe('昨天傍晚'); // 18:30 in Shanghai
    expect(zh('2025-03-08T02:00:00Z')).toBe('星期六');
  });

  it('survives a bad time zone or date', () => {
    expect(formatWhen('2025-03-12T14:55:00Z', { now, locale: 'en', timeZone: 'Not/AZone', labels })).toBe('5 minutes ago');
    expect(when('not a date')).toBe('');
  });
});

describe('helpers', () => {
  it('splits the day into parts', () => {
    expect(partOfDay(2)).toBe('yesterdayEarly');
    expect(partOfDay(9)).toBe('yesterdayMorning');
    expect(partOfDay(13)).toBe('yesterdayAfternoon');
    expect(partOfDay(19)).toBe('yesterdayEvening');
    expect(partOfDay(23)).toBe('yesterdayNight');
  });

  it('counts calendar days across a daylight-saving change', () => {
    // Berlin moved its clocks on 2025-03-30.
    expect(calendarDaysBetween(new Date('2025-03-29T12:00:00Z'), new Date('2025-03-31T12:00:00Z'), 'Europe/Berlin')).toBe(2);
  });

  it('spells out a day heading', () => {
    expect(formatDay(new Date('2025-03-08T10:00:00Z'), 'en-GB', 'Europe/Berlin', now)).toBe('Saturday 8 March');
  });
});
