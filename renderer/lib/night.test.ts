import { describe, expect, it } from 'vitest';
import { SLEEP_STEP_IDS, type SleepStepInfo } from '../../shared/api.js';
import en from '../i18n/en.js';
import zhCN from '../i18n/zh-CN.js';
import { durationMs, formatCompact, formatDuration, formatStat, layoutSteps, MAX_DEPTH, nextSleepKind, share, statChips, statLabel } from './night.js';

function step(stepId: string, dependsOn: string[] = [], over: Partial<SleepStepInfo> = {}): SleepStepInfo {
  return { stepId, dependsOn, status: 'pending', reason: null, waitedFor: null, startedAt: null, finishedAt: null, stats: null, error: null, ...over };
}

describe('layoutSteps', () => {
  // The cycle as the architecture describes it.
  const night = [
    step('memory-ref-sync'),
    step('light-sleep', ['memory-ref-sync']),
    step('snapshot', ['light-sleep']),
    step('deep-sleep', ['snapshot']),
    step('dream', ['light-sleep']),
    step('mood-trend', ['light-sleep']),
    step('digest', ['deep-sleep', 'dream', 'mood-trend']),
  ];

  it('keeps the run order and indents each step under what it waits for', () => {
    const rows = layoutSteps(night);
    expect(rows.map((r) => r.step.stepId)).toEqual(night.map((s) => s.stepId));
    expect(Object.fromEntries(rows.map((r) => [r.step.stepId, r.depth]))).toEqual({
      'memory-ref-sync': 0,
      'light-sleep': 1,
      snapshot: 2,
      'deep-sleep': 3,
      dream: 2,
      'mood-trend': 2,
      digest: MAX_DEPTH,
    });
    expect(rows.find((r) => r.step.stepId === 'digest')!.after).toEqual(['deep-sleep', 'dream', 'mood-trend']);
  });

  it('puts a step after its dependencies even when listed before them', () => {
    const rows = layoutSteps([step('b', ['a']), step('a'), step('c')]);
    expect(rows.map((r) => r.step.stepId)).toEqual(['a', 'b', 'c']);
  });

  it('ignores unknown dependencies and does not hang on a cycle', () => {
    expect(layoutSteps([step('a', ['ghost'])])[0]).toMatchObject({ depth: 0, after: [] });
    const rows = layoutSteps([step('a', ['b']), step('b', ['a'])]);
    expect(rows).toHaveLength(2);
  });
});

describe('durations', () => {
  it('measures finished steps, and running ones against now', () => {
    expect(durationMs('2025-01-01T02:00:00Z', '2025-01-01T02:00:12.5Z')).toBe(12_500);
    expect(durationMs('2025-01-01T02:00:00Z', null, new Date('2025-01-01T02:01:00Z'))).toBe(60_000);
    expect(durationMs(null, '2025-01-01T02:00:00Z')).toBeNull();
    expect(durationMs('2025-01-01T02:00:00Z', null)).toBeNull();
    expect(durationMs('2025-01-01T02:00:10Z', '2025-01-01T02:00:00Z')).toBeNull();
  });

  it('reads well in the locale', () => {
    expect(formatDuration(420, 'en')).toBe('0.4 sec');
    expect(formatDuration(12_400, 'en')).toBe('12 sec');
    expect(formatDuration(185_000, 'en')).toBe('3 min 5 sec');
    expect(formatDuration(120_000, 'en')).toBe('2 min');
    expect(formatDuration(12_400, 'zh-CN')).toContain('12');
  });
});

describe('counts and shares', () => {
  it('writes small numbers out and large ones compact', () => {
    expect(formatCompact(1234, 'en')).toBe('1,234');
    expect(formatCompact(48_200, 'en')).toBe('48.2K');
  });

  it('is a fraction 0–1, and 0 when nothing is allowed', () => {
    expect(share(10, 40)).toBe(0.25);
    expect(share(50, 40)).toBe(1);
    expect(share(5, 0)).toBe(0);
  });

  it('turns stats into labelled chips', () => {
    expect(statLabel('memoriesWritten')).toBe('memories written');
    expect(statLabel('llm_calls')).toBe('llm calls');
    expect(statChips({ calls: 3, anchors: 2, bad: Number.NaN })).toEqual([
      { key: 'calls', value: 3 },
      { key: 'anchors', value: 2 },
    ]);
    expect(statChips(null)).toEqual([]);
    // Zeros say nothing, unless nothing else is there.
    expect(statChips({ calls: 0, added: 4, refused: 0 })).toEqual([{ key: 'added', value: 4 }]);
    expect(statChips({ a: 0, b: 0, c: 0 })).toEqual([
      { key: 'a', value: 0 },
      { key: 'b', value: 0 },
    ]);
  });

  it('writes milliseconds as a duration and bytes as a size', () => {
    expect(formatStat('ms', 2403, 'en')).toBe('2.4 sec');
    expect(formatStat('bytes', 5_100_000, 'en')).toBe('5.1 MB');
    expect(formatStat('bytes', 512, 'en')).toBe('512 byte');
    expect(formatStat('free_mb', 2048, 'en')).toBe('2 GB');
    expect(formatStat('calls', 12_345, 'en')).toBe('12.3K');
  });
});

describe('nextSleepKind', () => {
  const at = (iso: string) => new Date(iso);
  it('calls the coming night’s small hours "tonight"', () => {
    expect(nextSleepKind(at('2025-03-11T02:00:00Z'), at('2025-03-10T21:00:00Z'), 'UTC')).toBe('tonight');
    expect(nextSleepKind(at('2025-03-11T02:00:00Z'), at('2025-03-10T09:00:00Z'), 'UTC')).toBe('tonight');
    expect(nextSleepKind(at('2025-03-11T02:00:00Z'), at('2025-03-11T01:00:00Z'), 'UTC')).toBe('tonight');
    expect(nextSleepKind(at('2025-03-10T23:00:00Z'), at('2025-03-10T09:00:00Z'), 'UTC')).toBe('tonight');
  });

  it('says today, tomorrow, or gives a date', () => {
    expect(nextSleepKind(at('2025-03-10T14:00:00Z'), at('2025-03-10T09:00:00Z'), 'UTC')).toBe('today');
    expect(nextSleepKind(at('2025-03-12T02:00:00Z'), at('2025-03-11T03:00:00Z'), 'UTC')).toBe('tomorrow');
    expect(nextSleepKind(at('2025-03-11T14:00:00Z'), at('2025-03-10T09:00:00Z'), 'UTC')).toBe('tomorrow');
    expect(nextSleepKind(at('2025-03-14T02:00:00Z'), at('2025-03-10T09:00:00Z'), 'UTC')).toBe('date');
  });

  it('reads the clock in the configured zone', () => {
    // 01:00 UTC is 02:00 in Berlin (winter): seen from Berlin's evening it is tonight.
    expect(nextSleepKind(at('2025-01-11T01:00:00Z'), at('2025-01-10T20:00:00Z'), 'Europe/Berlin')).toBe('tonight');
  });
});

describe('step names', () => {
  it('every step of the cycle has a name in both languages', () => {
    for (const id of SLEEP_STEP_IDS) {
      expect(en.sleep.steps[id], id).toBeTypeOf('string');
      expect(zhCN.sleep.steps[id], id).toBeTypeOf('string');
    }
  });
});
