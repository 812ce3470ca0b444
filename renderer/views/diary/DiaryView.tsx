// Diary: a journal by sleep day, newest first. Each day has its mood as a colour and in words, the
// emotional anchor of each conversation, the imprints (moments that stayed) as quotes, and the
// companion's own account of the day. The mood chart sits on top; search uses the companion's own
// recall over what it felt and wrote. Anything can be hidden, with undo.
import { useEffect, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import type { DiaryBlock, DiaryDay, Mood, RecallHit } from '../../../shared/api.js';
import { useDayLabels, useFleeting, useTimeFormat } from '../../app/hooks.js';
import { Loading, RetryNote } from '../../components/LoadPanel.js';
import { SearchField } from '../../components/SearchField.js';
import { paragraphs } from '../../lib/days.js';
import { arousalWord, moodColor, moodLabels, valenceWord } from '../../lib/mood.js';
import { reportError, useApp } from '../../stores/app.js';
import { dayIsEmpty, hitDay, useDiary } from '../../stores/diary.js';
import { NightsEmpty } from '../sleep/NightsEmpty.js';
import { MoodChart } from './MoodChart.js';

function MoodSwatch({ mood, size = 'large' }: { mood: Mood; size?: 'large' | 'small' }) {
  const { t } = useTranslation();
  const theme = useApp((s) => s.theme);
  const words = [t(`diary.valence.${valenceWord(mood.valence)}`), t(`diary.arousal.${arousalWord(mood.arousal)}`)].join(', ');
  return (
    <span
      className={`mood-swatch mood-swatch-${size}`}
      style={{ background: moodColor(mood.valence, mood.arousal, theme) }}
      role="img"
      aria-label={t('diary.moodOf', { words })}
      title={t('diary.moodOf', { words })}
    />
  );
}

function HideButton({ block }: { block: DiaryBlock }) {
  const { t } = useTranslation();
  const onHide = () => {
    void (async () => {
      await useDiary.getState().hide(block);
      useApp.getState().toast({
        tone: 'info',
        text: t('diary.hidden'),
        action: {
          label: t('common.undo'),
          run: () => {
            void useDiary.getState().unhide(block).catch(reportError);
          },
        },
      });
    })().catch(reportError);
  };
  return (
    <button
      type="button"
      className="diary-hide"
      data-testid="diary-hide"
      aria-label={t(`diary.hideLabel.${block.kind === 'anchor' ? 'anchor' : block.kind === 'imprint' ? 'imprint' : 'narrative'}`)}
      onClick={onHide}
    >
      {t('diary.hide')}
    </button>
  );
}

function Paragraphs({ text }: { text: string }) {
  return (
    <>
      {paragraphs(text).map((p, i) => (
        <p key={i}>{p}</p>
      ))}
    </>
  );
}

function Day({ day, highlight }: { day: DiaryDay; highlight: number | null }) {
  const { t } = useTranslation();
  const { long } = useDayLabels();
  const { full } = useTimeFormat();
  const labels = moodLabels(day.mood);
  const headingId = `diary-day-${day.day}`;
  const block = (b: DiaryBlock) => ({
    'data-testid': 'diary-block',
    'data-kind': b.kind,
    'data-id': b.id,
    className: `diary-block diary-${b.kind}${highlight === b.id ? ' flash' : ''}`,
  });

  return (
    <article className="diary-day" data-testid="diary-day" data-day={day.day} aria-labelledby={headingId} tabIndex={-1}>
      <header className="diary-day-head">
        {day.mood ? <MoodSwatch mood={day.mood} /> : <span className="mood-swatch mood-swatch-large mood-swatch-none" aria-hidden="true" />}
        <div className="diary-day-title">
          <h2 id={headingId}>
            <time dateTime={day.day}>{long(day.day)}</time>
          </h2>
          {labels.length ? (
            <p className="diary-mood-words">
              <span className="visually-hidden">{t('diary.moodWords')} </span>
              {labels.join(' · ')}
            </p>
          ) : null}
        </div>
      </header>

      {dayIsEmpty(day) ? <p className="diary-day-empty">{t('diary.dayAllHidden')}</p> : null}

      {day.anchors.length ? (
        <section className="diary-part" aria-label={t('diary.anchorsTitle')}>
          <h3 className="diary-part-title">{t('diary.anchorsTitle')}</h3>
          <ul className="diary-anchors">
            {day.anchors.map((a) => (
              <li key={a.id} {...block(a)}>
                {a.mood ? <MoodSwatch mood={a.mood} size="small" /> : null}
                <div className="diary-anchor-body">
                  <p className="diary-anchor-text">{a.body}</p>
                  {moodLabels(a.mood).length ? <p className="diary-anchor-labels">{moodLabels(a.mood).join(' · ')}</p> : null}
                </div>
                <HideButton block={a} />
              </li>
            ))}
          </ul>
        </section>
      ) : null}

      {day.imprints.length ? (
        <section className="diary-part" aria-label={t('diary.imprintsTitle')}>
          <h3 className="diary-part-title">{t('diary.imprintsTitle')}</h3>
          {day.imprints.map((imp) => (
            <figure key={imp.id} {...block(imp)}>
              <blockquote className="diary-imprint-quote">
                <Paragraphs text={imp.body} />
              </blockquote>
              <HideButton block={imp} />
            </figure>
          ))}
        </section>
      ) : null}

      {day.narratives.map((n) => (
        <section key={n.id} {...block(n)} aria-label={n.title ?? t('diary.narrativeTitle')}>
          <div className="diary-narrative-head">
            <h3 className="diary-narrative-title">{n.title ?? t('diary.narrativeTitle')}</h3>
            <HideButton block={n} />
          </div>
          <div className="diary-narrative-body">
            <Paragraphs text={n.body} />
          </div>
          <p className="diary-written" title={full(n.createdAt)}>
            {t('diary.written', { when: full(n.createdAt) })}
          </p>
        </section>
      ))}
    </article>
  );
}

function SearchBox() {
  const { t } = useTranslation();
  const query = useDiary((s) => s.query);
  const setQuery = useDiary((s) => s.setQuery);
  const searching = useDiary((s) => s.search.loading);
  return (
    <SearchField
      query={query}
      setQuery={setQuery}
      searching={searching}
      className="mem-search diary-search"
      testId="diary-search"
      label={t('diary.search.label')}
      placeholder={t('diary.search.placeholder')}
      searchingLabel={t('diary.search.searching')}
      clearLabel={t('diary.search.clear')}
    />
  );
}

function SearchResults() {
  const { t } = useTranslation();
  const { long } = useDayLabels();
  const query = useDiary((s) => s.query);
  const search = useDiary((s) => s.search);

  const open = (hit: RecallHit) => {
    const target = hitDay(hit);
    if (!target) return;
    const s = useDiary.getState();
    s.setQuery('');
    void s.goToDay(target.day, target.blockId);
  };

  if (search.error) return <RetryNote error={search.error} onRetry={() => void useDiary.getState().runSearch()} />;
  const hits = search.hits.filter((h) => hitDay(h));
  if (search.loaded && !hits.length && !search.loading) {
    return <p className="diary-note">{t('diary.search.empty', { query: query.trim() })}</p>;
  }
  return (
    <>
      <p className="diary-note">{t('diary.search.hint')}</p>
      <ul className="diary-hits" aria-label={t('diary.search.results')} aria-busy={search.loading || undefined}>
        {hits.map((hit, i) => {
          const target = hitDay(hit)!;
          return (
            <li key={`${target.blockId}-${i}`}>
              <button type="button" className="diary-hit" data-testid="diary-hit" data-day={target.day} data-block={target.blockId} onClick={() => open(hit)}>
                <span className="diary-hit-top">
                  <span className="diary-hit-day">{long(target.day)}</span>
                  <span className="diary-hit-kind">{t(`diary.search.sources.${hit.source === 'limbic' ? 'limbic' : 'autobiographical'}`)}</span>
                </span>
                <span className="diary-hit-text">{hit.text}</span>
              </button>
            </li>
          );
        })}
      </ul>
    </>
  );
}

function Empty() {
  const { t } = useTranslation();
  return (
    <NightsEmpty
      view="diary"
      words={(auto, when) => ({ title: auto ? t('diary.emptyTitle', { when }) : t('diary.emptyTitleManual'), body: t('diary.emptyBody') })}
    />
  );
}

function Timeline() {
  const { t } = useTranslation();
  const days = useDiary((s) => s.days);
  const focus = useDiary((s) => s.focus);
  const list = useRef<HTMLElement>(null);
  // The block a search led to glows for a moment; the request itself is used up at once, so coming
  // back to the Diary later does not scroll there again.
  const [glow, setGlow] = useFleeting<{ day: string; blockId: number | null } | null>(null, 2400);

  useEffect(() => {
    if (!focus) return;
    const root = list.current;
    const day = root?.querySelector<HTMLElement>(`[data-testid="diary-day"][data-day="${focus.day}"]`);
    useDiary.getState().clearFocus();
    if (!day) return;
    const target = (focus.blockId !== null && day.querySelector<HTMLElement>(`[data-id="${focus.blockId}"]`)) || day;
    target.scrollIntoView({ block: 'start', behavior: matchMedia('(prefers-reduced-motion: reduce)').matches ? 'auto' : 'smooth' });
    day.focus({ preventScroll: true });
    setGlow({ day: focus.day, blockId: focus.blockId });
  }, [focus, setGlow]);

  if (days.error && !days.items.length) return <RetryNote error={days.error} onRetry={() => void useDiary.getState().refreshDays()} />;
  return (
    <>
      <section ref={list} className="diary-days" aria-label={t('diary.daysLabel')} aria-busy={days.loading || undefined}>
        {days.items.map((d) => (
          <Day key={d.day} day={d} highlight={glow?.day === d.day ? glow.blockId : null} />
        ))}
      </section>
      <div className="diary-more">
        {days.olderError ? (
          <RetryNote error={days.olderError} compact onRetry={() => void useDiary.getState().loadOlder()} />
        ) : days.hasMore ? (
          <button type="button" className="button" data-testid="diary-older" disabled={days.loadingOlder} onClick={() => void useDiary.getState().loadOlder()}>
            {days.loadingOlder ? <span className="spinner" aria-hidden="true" /> : null}
            {t('diary.loadOlder')}
          </button>
        ) : (
          <p className="diary-note">{t('diary.firstDay')}</p>
        )}
      </div>
    </>
  );
}

export function DiaryView() {
  const { t } = useTranslation();
  const days = useDiary((s) => s.days);
  const query = useDiary((s) => s.query);

  useEffect(() => {
    const s = useDiary.getState();
    void s.refreshDays();
    void s.refreshMood();
    if (s.query.trim()) void s.runSearch();
  }, []);

  const empty = days.loaded && !days.items.length && !days.error;

  return (
    <div className="diary" data-testid="view-diary" data-empty={empty || undefined}>
      <div className="diary-inner">
        <header className="diary-head">
          <h1 className="page-title">{t('diary.title')}</h1>
          {!empty ? <p className="diary-intro">{t('diary.intro')}</p> : null}
        </header>
        {!days.loaded ? (
          <Loading />
        ) : empty ? (
          <Empty />
        ) : (
          <>
            <MoodChart />
            <SearchBox />
            {query.trim() ? <SearchResults /> : <Timeline />}
          </>
        )}
      </div>
    </div>
  );
}
