// Graph: a map of the person's world. The map fills the view; over it a search box, the kind
// filters, a time slider ("as it was on …"), a banner when only a neighbourhood is drawn, and a side
// panel for the selected person, place or thing with its profile, facts, relations and edits.
import { useEffect, useId, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { useTranslation } from 'react-i18next';
import type { Entity } from '../../../shared/api.js';
import { useMediaQuery } from '../../app/hooks.js';
import { useIsPhone } from '../../app/phone.js';
import { ErrorNote } from '../../components/ErrorNote.js';
import { Icon } from '../../components/Icon.js';
import { Loading, RetryNote } from '../../components/LoadPanel.js';
import { SleepNowButton, useNextSleepWords } from '../../components/SleepNow.js';
import { currentLocale } from '../../i18n/index.js';
import { formatCount } from '../../lib/memories.js';
import { useApp } from '../../stores/app.js';
import { addDays, daysBetween, FILTER_KINDS, graphIsEmpty, useGraph } from '../../stores/graph.js';
import { EntityPanel, KindDot } from './EntityPanel.js';
import { mostMentioned } from './elements.js';
import { GraphCanvas } from './GraphCanvas.js';
import { useDayFormat, useRelationLabel } from './hooks.js';

function SearchBox({ inputRef }: { inputRef: React.RefObject<HTMLInputElement | null> }) {
  const { t } = useTranslation();
  const query = useGraph((s) => s.query);
  const search = useGraph((s) => s.search);
  const setQuery = useGraph((s) => s.setQuery);
  const [active, setActive] = useState(0);
  const [open, setOpen] = useState(false);
  const listId = useId();
  const hits = search.hits;
  const showList = open && Boolean(query.trim()) && (search.loaded || hits.length > 0);

  useEffect(() => setActive(0), [search.hits]);

  const pick = (entity: Entity | undefined) => {
    if (!entity) return;
    setOpen(false);
    void useGraph.getState().pick(entity);
  };

  const onKey = async (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      setOpen(true);
      if (!hits.length) return;
      setActive((a) => (a + (e.key === 'ArrowDown' ? 1 : -1) + hits.length) % hits.length);
    } else if (e.key === 'Enter') {
      e.preventDefault();
      if (!query.trim()) return;
      // Enter before the debounced search answered: ask now, then take the first.
      if (search.query !== query.trim() || search.loading) await useGraph.getState().runSearch();
      const now = useGraph.getState().search.hits;
      pick(now[Math.min(active, now.length - 1)] ?? now[0]);
    } else if (e.key === 'Escape') {
      if (open && query) {
        e.preventDefault();
        e.stopPropagation();
        setOpen(false);
      } else if (query) {
        e.preventDefault();
        e.stopPropagation();
        setQuery('');
      }
    }
  };

  return (
    <div className="graph-search" role="search">
      <Icon name="search" size={17} className="graph-search-icon" />
      <input
        ref={inputRef}
        type="search"
        className="input"
        data-testid="graph-search"
        role="combobox"
        aria-label={t('graph.searchLabel')}
        aria-expanded={showList}
        aria-controls={listId}
        aria-autocomplete="list"
        aria-activedescendant={showList && hits[active] ? `${listId}-${hits[active]!.id}` : undefined}
        placeholder={t('graph.searchPlaceholder')}
        value={query}
        maxLength={200}
        autoComplete="off"
        spellCheck={false}
        onChange={(e) => {
          setQuery(e.target.value);
          setOpen(true);
        }}
        onFocus={() => setOpen(true)}
        onBlur={() => setOpen(false)}
        onKeyDown={(e) => void onKey(e)}
      />
      {search.loading && query.trim() ? <span className="spinner graph-search-spin" role="status" aria-label={t('graph.searching')} /> : null}
      {query ? (
        <button type="button" className="icon-button small graph-search-clear" aria-label={t('graph.clearSearch')} onClick={() => setQuery('')}>
          <Icon name="close" size={15} />
        </button>
      ) : null}
      <kbd className="graph-search-key" aria-hidden="true">
        /
      </kbd>
      {showList ? (
        <ul className="graph-hits" id={listId} role="listbox" aria-label={t('graph.hitsLabel')} data-testid="graph-hits">
          {search.error ? (
            <li className="graph-hits-note" role="presentation">
              <ErrorNote error={search.error} compact />
            </li>
          ) : hits.length ? (
            hits.map((h, i) => (
              <li
                key={h.id}
                id={`${listId}-${h.id}`}
                role="option"
                aria-selected={i === active}
                className={i === active ? 'graph-hit active' : 'graph-hit'}
                data-testid="graph-hit"
                data-id={h.id}
                // Keeps the input's focus (and so the list) until the click lands.
                onMouseDown={(e) => e.preventDefault()}
                onMouseEnter={() => setActive(i)}
                onClick={() => pick(h)}
              >
                <KindDot kind={h.kind} />
                <span className="graph-hit-name">{h.name}</span>
                {h.aliases.length ? <span className="graph-hit-alias">{h.aliases.slice(0, 2).join(', ')}</span> : null}
                <span className="graph-hit-kind">{t(`graph.kind.${h.kind}`)}</span>
                {h.status === 'hidden' ? <span className="badge">{t('graph.panel.hiddenBadge')}</span> : null}
              </li>
            ))
          ) : search.loaded && !search.loading ? (
            <li className="graph-hits-note" role="presentation">
              {t('graph.noHits', { query: query.trim() })}
            </li>
          ) : null}
        </ul>
      ) : null}
    </div>
  );
}

function KindChips() {
  const { t } = useTranslation();
  const kinds = useGraph((s) => s.kinds);
  const toggle = useGraph((s) => s.toggleKind);
  const clear = useGraph((s) => s.clearKinds);
  return (
    <div className="graph-kinds" role="group" aria-label={t('graph.kindsLabel')}>
      {FILTER_KINDS.map((kind) => (
        <button
          key={kind}
          type="button"
          className="toggle-chip graph-chip"
          data-testid={`graph-kind-${kind}`}
          aria-pressed={kinds.includes(kind)}
          onClick={() => toggle(kind)}
        >
          <KindDot kind={kind} />
          {t(`graph.kinds.${kind}`)}
        </button>
      ))}
      {kinds.length ? (
        <button type="button" className="link-button graph-kinds-reset" onClick={clear}>
          {t('graph.allKinds')}
        </button>
      ) : null}
    </div>
  );
}

function TimeSlider() {
  const { t } = useTranslation();
  const range = useGraph((s) => s.range);
  const at = useGraph((s) => s.at);
  const setAt = useGraph((s) => s.setAt);
  const fmt = useDayFormat();
  const labelId = useId();
  if (!range) {
    return (
      <div className="graph-time graph-time-off" data-testid="graph-time-off">
        <Icon name="regenerate" size={15} />
        <span>{t('graph.time.noPast')}</span>
      </div>
    );
  }
  const span = Math.max(1, daysBetween(range.min, range.max));
  const value = at ? Math.max(0, Math.min(span, daysBetween(range.min, at))) : span;
  const shown = at ? fmt(at) : t('graph.time.now');
  return (
    <div className="graph-time" data-at={at ?? 'now'}>
      <span className="graph-time-label" id={labelId}>
        {at ? t('graph.time.asOf', { date: shown }) : t('graph.time.showingNow')}
      </span>
      <div className="graph-time-row">
        <span className="graph-time-end">{fmt(range.min)}</span>
        <input
          type="range"
          className="graph-time-range"
          data-testid="graph-time"
          data-min={range.min}
          data-max={range.max}
          min={0}
          max={span}
          step={1}
          value={value}
          aria-labelledby={labelId}
          aria-valuetext={shown}
          onChange={(e) => {
            const v = Number(e.target.value);
            setAt(v >= span ? null : addDays(range.min, v));
          }}
        />
        <span className="graph-time-end">{t('graph.time.now')}</span>
        <button type="button" className="button small graph-time-now" data-testid="graph-time-now" disabled={!at} onClick={() => setAt(null)}>
          {t('graph.time.reset')}
        </button>
      </div>
    </div>
  );
}

function ModeBanner() {
  const { t } = useTranslation();
  const data = useGraph((s) => s.slice.data);
  const locale = currentLocale();
  if (!data || data.mode !== 'ego') return null;
  const center = data.nodes.find((n) => n.id === data.centerId);
  const counts = { shown: formatCount(data.nodes.length, locale), total: formatCount(data.totalEntities, locale) };
  return (
    <div className="graph-banner" role="status" data-testid="graph-mode-banner" data-center={data.centerId ?? undefined}>
      <Icon name="graph" size={16} />
      <span>{center ? t('graph.egoBanner', { name: center.name, ...counts }) : t('graph.egoBannerNoName', counts)}</span>
      <span className="graph-banner-help">{t('graph.egoHelp')}</span>
    </div>
  );
}

function EmptyNote() {
  const { t } = useTranslation();
  const words = useNextSleepWords();
  const auto = useApp((s) => s.settings?.sleep?.auto ?? true);
  const setView = useApp((s) => s.setView);
  return (
    <div className="graph-empty" data-testid="graph-empty">
      <h2 className="graph-empty-title">{t('graph.emptyTitle')}</h2>
      <p className="graph-empty-body">{auto ? t('graph.emptyBody', { when: words }) : t('graph.emptyBodyManual')}</p>
      <div className="graph-empty-actions">
        <button type="button" className="button" onClick={() => setView('chat')}>
          {t('common.goToChat')}
        </button>
        <SleepNowButton testId="graph-sleep-now" goToSleep className="button ghost" />
      </div>
    </div>
  );
}

export function GraphView() {
  const { t } = useTranslation();
  const slice = useGraph((s) => s.slice);
  const kinds = useGraph((s) => s.kinds);
  const at = useGraph((s) => s.at);
  const selectedId = useGraph((s) => s.selectedId);
  const focus = useGraph((s) => s.focus);
  const theme = useApp((s) => s.theme);
  const reducedMotion = useMediaQuery('(prefers-reduced-motion: reduce)');
  const phone = useIsPhone();
  const relationLabel = useRelationLabel();
  const searchRef = useRef<HTMLInputElement>(null);
  const keysId = useId();
  const locale = currentLocale();
  const today = new Date().toISOString().slice(0, 10);

  useEffect(() => {
    // Opening the view shows the graph as it is now (changes elsewhere were not followed).
    const s = useGraph.getState();
    void s.refresh();
    if (s.detail) void s.loadDetail(s.detail.id, true);
  }, []);

  useEffect(() => {
    const onKey = (e: globalThis.KeyboardEvent) => {
      if (e.defaultPrevented || e.isComposing || e.ctrlKey || e.metaKey || e.altKey) return;
      const target = e.target as HTMLElement | null;
      const typing = target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
      if (e.key === '/' && !typing) {
        e.preventDefault();
        searchRef.current?.focus();
        searchRef.current?.select();
      } else if (e.key === 'Escape' && useGraph.getState().selectedId !== null && !(target instanceof HTMLInputElement && target.type === 'search')) {
        e.preventDefault();
        useGraph.getState().closePanel();
        // Focus goes back to the map, not to the top of the page.
        document.querySelector<HTMLElement>('[data-testid="graph-canvas"]')?.focus();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  const data = slice.data;
  const empty = graphIsEmpty(data) && !kinds.length && !at;
  const label = useMemo(() => {
    if (!data) return t('graph.canvasLoading');
    const base = t('graph.canvasLabel', { nodes: formatCount(data.nodes.length, locale), edges: formatCount(data.edges.length, locale) });
    const most = mostMentioned(data);
    return most.length ? `${base} ${t('graph.canvasMost', { names: most.join(', ') })}` : base;
  }, [data, t, locale]);

  return (
    <div className="graph" data-testid="view-graph" data-panel={selectedId !== null ? 'open' : 'none'} data-mode={data?.mode} data-empty={empty || undefined}>
      <h1 className="visually-hidden">{t('graph.title')}</h1>
      <p className="visually-hidden" id={keysId}>
        {t('graph.canvasKeys')}
      </p>
      <div className="graph-stage">
        {data ? (
          <GraphCanvas
            slice={data}
            day={at ?? today}
            selectedId={selectedId}
            focus={focus}
            reducedMotion={reducedMotion}
            theme={theme}
            relationLabel={relationLabel}
            label={label}
            describedBy={keysId}
            onSelect={(id) => useGraph.getState().select(id)}
          />
        ) : null}

        <div className="graph-top">
          <div className="graph-toolbar">
            <SearchBox inputRef={searchRef} />
            <KindChips />
          </div>
          <ModeBanner />
          {slice.error ? (
            <div className="graph-error">
              <RetryNote error={slice.error} compact onRetry={() => void useGraph.getState().refresh()} />
            </div>
          ) : null}
          {phone && data && !empty && selectedId === null ? (
            <p className="graph-phone-note" data-testid="graph-phone-note">
              {t('graph.phoneNote')}
            </p>
          ) : null}
          {data && !data.nodes.length && (kinds.length || at) ? (
            <div className="graph-note" role="status">
              {t('graph.filteredEmpty')}
            </div>
          ) : null}
        </div>

        {!data && !slice.error ? <Loading className="graph-loading" /> : null}
        {empty ? <EmptyNote /> : null}

        {!empty && data ? (
          <div className="graph-bottom">
            <TimeSlider />
          </div>
        ) : null}
      </div>
      {selectedId !== null ? <EntityPanel key={selectedId} id={selectedId} /> : null}
    </div>
  );
}
