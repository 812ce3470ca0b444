// The mood trend: daily valence as coloured points, arousal as a lighter line, and the 7- or 30-day
// trailing mean as the trend. A small inline SVG — the one place besides the day swatches where
// mood colours appear. The same story is told in words for screen readers (and under the chart).
import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import type { MoodPoint } from '../../../shared/api.js';
import { useDayLabels } from '../../app/hooks.js';
import { LoadPanel } from '../../components/LoadPanel.js';
import { arousalWord, moodChart, moodColor, MOOD_RANGES, valenceWord, type ChartModel, type MoodRange } from '../../lib/mood.js';
import { useApp } from '../../stores/app.js';
import { useDiary } from '../../stores/diary.js';

function useSummary(model: ChartModel, range: MoodRange): string {
  const { t } = useTranslation();
  const { long } = useDayLabels();
  const s = model.summary;
  if (!s) return t('diary.chart.empty');
  return t('diary.chart.summary', {
    count: s.count,
    range,
    mood: t(`diary.valence.${valenceWord(s.meanValence)}`),
    energy: t(`diary.arousal.${arousalWord(s.meanArousal)}`),
    direction: t(`diary.chart.direction.${s.direction}`),
    high: long(s.highest.day),
    low: long(s.lowest.day),
  });
}

function Chart({ points, range }: { points: MoodPoint[]; range: MoodRange }) {
  const { t } = useTranslation();
  const theme = useApp((s) => s.theme);
  const { long, short } = useDayLabels();
  const model = useMemo(() => moodChart(points, range), [points, range]);
  const summary = useSummary(model, range);
  const { size } = model;
  const left = size.padLeft;
  const right = size.width - size.padRight;
  const r = range === 7 ? 5 : 3.5;

  return (
    <figure className="mood-figure">
      <svg
        className="mood-svg"
        viewBox={`0 0 ${size.width} ${size.height}`}
        role="img"
        aria-label={summary}
        data-points={model.points.length}
        preserveAspectRatio="xMidYMid meet"
      >
        {/* The frame: bright at the top, low at the bottom, the even line between. */}
        <line x1={left} x2={right} y1={model.top} y2={model.top} className="mood-grid" />
        <line x1={left} x2={right} y1={model.bottom} y2={model.bottom} className="mood-grid" />
        <line x1={left} x2={right} y1={model.zeroY} y2={model.zeroY} className="mood-zero" />
        <text x={left - 8} y={model.top + 4} className="mood-axis" textAnchor="end">
          {t('diary.chart.bright')}
        </text>
        <text x={left - 8} y={model.zeroY + 4} className="mood-axis" textAnchor="end">
          {t('diary.chart.even')}
        </text>
        <text x={left - 8} y={model.bottom} className="mood-axis" textAnchor="end">
          {t('diary.chart.low')}
        </text>
        <text x={right + 8} y={model.top + 4} className="mood-axis mood-axis-arousal">
          {t('diary.chart.intense')}
        </text>
        <text x={right + 8} y={model.bottom} className="mood-axis mood-axis-arousal">
          {t('diary.chart.calm')}
        </text>
        {model.ticks.map((tick) => (
          <text key={tick.day} x={tick.x} y={size.height - 8} className="mood-axis" textAnchor="middle">
            {short(tick.day)}
          </text>
        ))}

        {model.arousalPath ? <path d={model.arousalPath} className="mood-arousal" /> : null}
        {model.points.map((p) => (
          <circle key={`a-${p.day}`} cx={p.x} cy={p.yArousal} r={2.2} className="mood-arousal-dot" />
        ))}
        {model.trendPath ? <path d={model.trendPath} className="mood-trend" /> : null}
        {model.points.map((p) => (
          <circle key={p.day} cx={p.x} cy={p.yValence} r={r} className="mood-dot" style={{ fill: moodColor(p.valence, p.arousal, theme) }}>
            <title>
              {t('diary.chart.point', {
                day: long(p.day),
                mood: t(`diary.valence.${valenceWord(p.valence)}`),
                energy: t(`diary.arousal.${arousalWord(p.arousal)}`),
              })}
            </title>
          </circle>
        ))}
      </svg>
      <figcaption className="mood-caption">
        <span className="mood-legend" aria-hidden="true">
          <span className="mood-key mood-key-dot" />
          {t('diary.chart.legendDaily')}
          <span className="mood-key mood-key-trend" />
          {range === 7 ? t('diary.chart.legendTrend7') : t('diary.chart.legendTrend30')}
          <span className="mood-key mood-key-arousal" />
          {t('diary.chart.legendArousal')}
        </span>
        <span className="mood-summary">{summary}</span>
      </figcaption>
    </figure>
  );
}

export function MoodChart() {
  const { t } = useTranslation();
  const mood = useDiary((s) => s.mood);
  const range = useDiary((s) => s.range);
  const setRange = useDiary((s) => s.setRange);

  return (
    <section className="mood-chart" data-testid="mood-chart" data-range={range} aria-labelledby="mood-chart-title">
      <div className="mood-head">
        <h2 className="diary-section-title" id="mood-chart-title">
          {t('diary.chart.title')}
        </h2>
        <div className="segmented" role="group" aria-label={t('diary.chart.rangeLabel')}>
          {MOOD_RANGES.map((n) => (
            <button key={n} type="button" className="segment" data-testid={`mood-range-${n}`} aria-pressed={range === n} onClick={() => setRange(n)}>
              {t('diary.chart.days', { count: n })}
            </button>
          ))}
        </div>
      </div>
      <LoadPanel
        error={mood.points.length ? null : mood.error}
        loaded={mood.loaded}
        compact
        loadingClassName="help mood-loading"
        onRetry={() => void useDiary.getState().refreshMood()}
      >
        {mood.points.length ? <Chart points={mood.points} range={range} /> : <p className="help">{t('diary.chart.empty')}</p>}
      </LoadPanel>
    </section>
  );
}
