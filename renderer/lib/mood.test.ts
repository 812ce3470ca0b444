import { describe, expect, it } from 'vitest';
import type { MoodPoint } from '../../shared/api.js';
import { CHART_SIZE, arousalWord, moodChart, moodColor, moodLabels, tickIndexes, valenceWord } from './mood.js';
import { daysBetween, paragraphs, shiftDay, sleepDayLabel } from './days.js';

function point(day: string, valence: number, over: Partial<MoodPoint> = {}): MoodPoint {
  return { day, valence, arousal: 0.5, anchors: 1, valence7: valence, valence30: valence, arousal7: 0.5, arousal30: 0.5, ...over };
}

const hsl = (s: string) => {
  const m = /^hsl\((\d+) (\d+)% (\d+)%\)$/.exec(s);
  if (!m) throw new Error(`not hsl: ${s}`);
  return { h: Number(m[1]), s: Number(m[2]), l: Number(m[3]) };
};

describe('moodColor', () => {
  it('leans blue when low, amber when bright, and is nearly grey when even', () => {
    expect(hsl(moodColor(-0.8, 0.5)).h).toBe(214);
    expect(hsl(moodColor(0.8, 0.5)).h).toBe(36);
    expect(hsl(moodColor(0, 0.5)).s).toBeLessThanOrEqual(12);
  });

  it('is more saturated the further from neutral and the more intense', () => {
    expect(hsl(moodColor(0.9, 0.5)).s).toBeGreaterThan(hsl(moodColor(0.3, 0.5)).s);
    expect(hsl(moodColor(0.6, 1)).s).toBeGreaterThan(hsl(moodColor(0.6, 0)).s);
  });

  it('clamps values out of range and survives NaN', () => {
    expect(moodColor(5, 5)).toBe(moodColor(1, 1));
    expect(moodColor(Number.NaN, Number.NaN)).toMatch(/^hsl\(/);
  });

  it('is lighter on the dark theme', () => {
    expect(hsl(moodColor(0.5, 0.8, 'dark')).l).toBeGreaterThan(hsl(moodColor(0.5, 0.8, 'light')).l);
  });
});

describe('mood words', () => {
  it('names valence and arousal in five and three steps', () => {
    expect([-0.9, -0.3, 0, 0.3, 0.9].map(valenceWord)).toEqual(['heavy', 'low', 'even', 'good', 'bright']);
    expect([0.1, 0.5, 0.9].map(arousalWord)).toEqual(['calm', 'lively', 'intense']);
  });

  it('keeps the mood’s own labels once each, in order, trimmed', () => {
    expect(moodLabels({ valence: 0, arousal: 0, labels: [' calm', 'Calm', '', 'tender', 'relieved', 'hopeful', 'tired'] })).toEqual([
      'calm',
      'tender',
      'relieved',
      'hopeful',
    ]);
    expect(moodLabels(null)).toEqual([]);
  });
});

describe('tickIndexes', () => {
  it('labels every point when few, else spreads them with both ends', () => {
    expect(tickIndexes(0)).toEqual([]);
    expect(tickIndexes(3)).toEqual([0, 1, 2]);
    expect(tickIndexes(30, 4)).toEqual([0, 10, 19, 29]);
  });
});

describe('moodChart', () => {
  const thirty = Array.from({ length: 30 }, (_, i) => point(shiftDay('2025-03-01', i), -0.5 + i / 30, { valence7: i / 30, valence30: 0.1 }));

  it('labels every day while they fit, else five of them', () => {
    expect(moodChart(thirty.slice(0, 5), 30).ticks).toHaveLength(5);
    expect(moodChart(thirty, 30).ticks.map((t) => t.day)).toEqual([0, 7, 15, 22, 29].map((i) => thirty[i]!.day));
  });

  it('shows the last 7 or 30 days, oldest on the left', () => {
    const shuffled = [...thirty].reverse();
    const week = moodChart(shuffled, 7);
    expect(week.points.map((p) => p.day)).toEqual(thirty.slice(-7).map((p) => p.day));
    expect(week.points[0]!.x).toBe(CHART_SIZE.padLeft);
    expect(week.points[6]!.x).toBe(CHART_SIZE.width - CHART_SIZE.padRight);
    expect(moodChart(thirty, 30).points).toHaveLength(30);
  });

  it('draws the trailing mean that matches the span', () => {
    const week = moodChart(thirty, 7);
    expect(week.points.map((p) => p.trend)).toEqual(thirty.slice(-7).map((p) => p.valence7));
    const month = moodChart(thirty, 30);
    expect(new Set(month.points.map((p) => p.trend))).toEqual(new Set([0.1]));
    expect(week.trendPath.startsWith('M')).toBe(true);
    expect(week.trendPath.split('L')).toHaveLength(7);
  });

  it('puts bright at the top, low at the bottom and even in the middle', () => {
    const chart = moodChart([point('2025-01-01', 1), point('2025-01-02', -1), point('2025-01-03', 0)], 7);
    expect(chart.points[0]!.yValence).toBe(chart.top);
    expect(chart.points[1]!.yValence).toBe(chart.bottom);
    expect(chart.points[2]!.yValence).toBe(chart.zeroY);
    expect(chart.zeroY).toBe((chart.top + chart.bottom) / 2);
  });

  it('maps arousal onto its own scale: calm at the bottom, intense at the top', () => {
    const chart = moodChart([point('2025-01-01', 0, { arousal: 0 }), point('2025-01-02', 0, { arousal: 1 })], 7);
    expect(chart.points[0]!.yArousal).toBe(chart.bottom);
    expect(chart.points[1]!.yArousal).toBe(chart.top);
  });

  it('summarises: mean, direction, brightest and lowest day', () => {
    const s = moodChart(thirty, 7).summary!;
    expect(s.count).toBe(7);
    expect(s.highest.day).toBe(thirty[29]!.day);
    expect(s.lowest.day).toBe(thirty[23]!.day);
    expect(s.direction).toBe('rising');
    const falling = moodChart([point('2025-01-01', 0.8), point('2025-01-02', -0.4)], 7).summary!;
    expect(falling.direction).toBe('falling');
    expect(moodChart([point('2025-01-01', 0.3)], 7).summary!.direction).toBe('steady');
  });

  it('handles one point (centred, no lines) and none', () => {
    const one = moodChart([point('2025-01-01', 0.3)], 30);
    expect(one.points[0]!.x).toBe((CHART_SIZE.padLeft + CHART_SIZE.width - CHART_SIZE.padRight) / 2);
    expect(one.trendPath).toBe('');
    expect(one.arousalPath).toBe('');
    const none = moodChart([], 7);
    expect(none.points).toEqual([]);
    expect(none.summary).toBeNull();
    expect(none.ticks).toEqual([]);
  });
});

describe('sleep days', () => {
  it('does calendar arithmetic without time zones', () => {
    expect(shiftDay('2025-03-01', -1)).toBe('2025-02-28');
    expect(shiftDay('2024-12-31', 1)).toBe('2025-01-01');
    expect(daysBetween('2025-03-29', '2025-04-01')).toBe(3);
    expect(shiftDay('not a day', 1)).toBe('not a day');
  });

  it('says Today and Yesterday relative to the current sleep day, else spells the day out', () => {
    const words = { today: 'Today', yesterday: 'Yesterday' };
    expect(sleepDayLabel('2025-03-10', '2025-03-10', 'en-GB', words)).toBe('Today');
    expect(sleepDayLabel('2025-03-09', '2025-03-10', 'en-GB', words)).toBe('Yesterday');
    expect(sleepDayLabel('2025-03-03', '2025-03-10', 'en-GB', words)).toMatch(/^Monday,? 3 March$/);
    expect(sleepDayLabel('2024-03-03', '2025-03-10', 'en-GB', words)).toMatch(/^Sunday,? 3 March 2024$/);
    expect(sleepDayLabel('2025-03-03', '2025-03-10', 'zh-CN', words)).toContain('3月3日');
  });

  it('splits text into paragraphs at blank lines only', () => {
    expect(paragraphs('One\ntwo.\n\n  Three.  \n\n\n')).toEqual(['One\ntwo.', 'Three.']);
    expect(paragraphs('')).toEqual([]);
  });
});
