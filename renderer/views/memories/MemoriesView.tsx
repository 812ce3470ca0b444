// Memories: a searchable card index. Search and filters on top, the cards, and a side panel with
// the open memory (or the form to add one).
import { memo, useEffect, useRef, type KeyboardEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { MEMORY_STATUSES, MEMORY_TYPES, type Memory, type RecallHit } from '../../../shared/api.js';
import { useTimeFormat } from '../../app/hooks.js';
import { Icon } from '../../components/Icon.js';
import { Illustration } from '../../components/Illustration.js';
import { Loading, RetryNote } from '../../components/LoadPanel.js';
import { SearchField } from '../../components/SearchField.js';
import { MemoryCounts, StatusBadge, TypeBadge } from '../../components/MemoryBits.js';
import { currentLocale } from '../../i18n/index.js';
import { DEFAULT_FILTERS, filtersAreDefault, formatCount, hitPassesFilters, memoryIdsOfHits, toggleStatus, toggleType } from '../../lib/memories.js';
import { useMemories } from '../../stores/memories.js';
import { AddMemory } from './AddMemory.js';
import { MemoryDetailPanel } from './MemoryDetail.js';

interface CardProps {
  id: number;
  memory: Memory | null;
  hit?: RecallHit;
  selected: boolean;
  when: string;
  fullWhen: string;
}

const MemoryCard = memo(function MemoryCard({ id, memory, hit, selected, when, fullWhen }: CardProps) {
  const { t } = useTranslation();
  const ref = useRef<HTMLButtonElement>(null);
  const type = memory?.type ?? hit?.memoryType ?? '';
  const status = memory?.status ?? 'active';
  const text = memory?.content ?? hit?.text ?? '';

  useEffect(() => {
    // Opened from elsewhere (a chip in chat): bring the card into view.
    if (selected) ref.current?.scrollIntoView({ block: 'nearest' });
  }, [selected]);

  return (
    <li>
      <button
        ref={ref}
        type="button"
        className={selected ? 'mem-card selected' : 'mem-card'}
        data-testid="memory-card"
        data-id={id}
        data-type={type}
        data-status={status}
        aria-current={selected ? 'true' : undefined}
        onClick={() => useMemories.getState().select(id)}
      >
        <span className="mem-card-top">
          <TypeBadge type={type} />
          <StatusBadge status={status} />
          {memory?.pinned ? (
            <span className="mem-pinned" title={t('memories.pinned')}>
              <Icon name="pins" size={14} />
              <span className="visually-hidden">{t('memories.pinned')}</span>
            </span>
          ) : null}
          <time className="mem-card-when" dateTime={memory?.updatedAt ?? hit?.time} title={fullWhen}>
            {when}
          </time>
        </span>
        <span className="mem-card-text">{text}</span>
        {memory ? <MemoryCounts memory={memory} className="mem-card-counts" /> : null}
      </button>
    </li>
  );
});

function Filters() {
  const { t } = useTranslation();
  const filters = useMemories((s) => s.filters);
  const setFilters = useMemories((s) => s.setFilters);
  return (
    <div className="mem-filters" role="group" aria-label={t('memories.filtersLabel')}>
      <div className="mem-filter-row" role="group" aria-label={t('memories.typeFilter')}>
        {MEMORY_TYPES.map((type) => (
          <button
            key={type}
            type="button"
            className="toggle-chip"
            data-testid={`memory-filter-${type}`}
            aria-pressed={filters.types.includes(type)}
            title={t(`memories.typeHelp.${type}`)}
            onClick={() => setFilters(toggleType(filters, type))}
          >
            {t(`memories.types.${type}`)}
          </button>
        ))}
      </div>
      <div className="mem-filter-row" role="group" aria-label={t('memories.statusFilter')}>
        {MEMORY_STATUSES.map((status) => (
          <button
            key={status}
            type="button"
            className="toggle-chip"
            data-testid={`memory-filter-status-${status}`}
            aria-pressed={filters.statuses.includes(status)}
            title={t(`memories.statusHelp.${status}`)}
            onClick={() => setFilters(toggleStatus(filters, status))}
          >
            {t(`memories.statuses.${status}`)}
          </button>
        ))}
        <span className="mem-filter-sep" aria-hidden="true" />
        <button
          type="button"
          className="toggle-chip"
          data-testid="memory-filter-pinned"
          aria-pressed={filters.pinnedOnly}
          onClick={() => setFilters({ ...filters, pinnedOnly: !filters.pinnedOnly })}
        >
          <Icon name="pins" size={14} />
          {t('memories.pinnedOnly')}
        </button>
        {!filtersAreDefault(filters) ? (
          <button type="button" className="link-button mem-reset" onClick={() => setFilters(DEFAULT_FILTERS)}>
            {t('memories.resetFilters')}
          </button>
        ) : null}
      </div>
    </div>
  );
}

function SearchBox() {
  const { t } = useTranslation();
  const query = useMemories((s) => s.query);
  const setQuery = useMemories((s) => s.setQuery);
  const searching = useMemories((s) => s.search.loading);
  return (
    <SearchField
      query={query}
      setQuery={setQuery}
      searching={searching}
      className="mem-search"
      testId="memory-search"
      label={t('memories.searchLabel')}
      placeholder={t('memories.searchPlaceholder')}
      searchingLabel={t('memories.searching')}
      clearLabel={t('memories.clearSearch')}
    />
  );
}

/** Arrow keys move between cards, like a list should. */
function onListKey(e: KeyboardEvent<HTMLUListElement>) {
  if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp' && e.key !== 'Home' && e.key !== 'End') return;
  const cards = [...e.currentTarget.querySelectorAll<HTMLButtonElement>('.mem-card')];
  const at = cards.indexOf(document.activeElement as HTMLButtonElement);
  if (at < 0) return;
  e.preventDefault();
  const next = e.key === 'Home' ? 0 : e.key === 'End' ? cards.length - 1 : Math.max(0, Math.min(cards.length - 1, at + (e.key === 'ArrowDown' ? 1 : -1)));
  cards[next]?.focus();
}

function NothingYet() {
  const { t } = useTranslation();
  const openAdd = useMemories((s) => s.openAdd);
  return (
    <div className="mem-nothing" data-testid="memories-empty">
      <Illustration view="memories" />
      <h2 className="mem-nothing-title">{t('memories.emptyTitle')}</h2>
      <p className="mem-nothing-body">{t('memories.emptyBody')}</p>
      <button type="button" className="button primary" data-testid="memory-add" onClick={openAdd}>
        <Icon name="plus" size={16} />
        {t('memories.add')}
      </button>
    </div>
  );
}

function MemoryList() {
  const { t } = useTranslation();
  const { when, full } = useTimeFormat();
  const query = useMemories((s) => s.query);
  const filters = useMemories((s) => s.filters);
  const list = useMemories((s) => s.list);
  const search = useMemories((s) => s.search);
  const cache = useMemories((s) => s.cache);
  const selectedId = useMemories((s) => s.selectedId);
  const anyAtAll = useMemories((s) => s.anyAtAll);
  const locale = currentLocale();
  const searching = Boolean(query.trim());

  if (searching) {
    if (search.error) {
      return (
        <div className="mem-list-note">
          <RetryNote error={search.error} onRetry={() => void useMemories.getState().runSearch()} />
        </div>
      );
    }
    const byId = new Map<number, RecallHit>();
    for (const h of search.hits) if (h.link.kind === 'memory' && !byId.has(h.link.memoryId)) byId.set(h.link.memoryId, h);
    const rows = memoryIdsOfHits(search.hits)
      .map((id) => ({ id, hit: byId.get(id)!, entry: cache[id] }))
      .filter((r) => r.entry?.status !== 'missing' && hitPassesFilters(r.hit, r.entry?.memory, filters));
    return (
      <>
        <p className="mem-list-hint">{t('memories.searchHint')}</p>
        {search.loaded && !rows.length && !search.loading ? (
          <p className="mem-list-empty">{t('memories.emptySearch', { query: query.trim() })}</p>
        ) : (
          <ul className="mem-cards" aria-label={t('memories.listLabel')} aria-busy={search.loading || undefined} onKeyDown={onListKey}>
            {rows.map(({ id, hit, entry }) => {
              const at = entry?.memory?.updatedAt ?? hit.time;
              return <MemoryCard key={id} id={id} memory={entry?.memory ?? null} hit={hit} selected={id === selectedId} when={when(at)} fullWhen={full(at)} />;
            })}
          </ul>
        )}
      </>
    );
  }

  if (list.error && !list.items.length) {
    return (
      <div className="mem-list-note">
        <RetryNote error={list.error} onRetry={() => void useMemories.getState().refreshList()} />
      </div>
    );
  }
  if (!list.loaded) return <Loading className="mem-list-empty" />;
  if (!list.items.length) {
    if (!filtersAreDefault(filters)) {
      return (
        <div className="mem-list-empty">
          <p>{t('memories.emptyFiltered')}</p>
          <button type="button" className="button small" onClick={() => useMemories.getState().setFilters(DEFAULT_FILTERS)}>
            {t('memories.resetFilters')}
          </button>
        </div>
      );
    }
    return anyAtAll ? <p className="mem-list-empty">{t('memories.emptyActive')}</p> : null;
  }
  return (
    <>
      <ul className="mem-cards" aria-label={t('memories.listLabel')} onKeyDown={onListKey}>
        {list.items.map((m) => (
          <MemoryCard key={m.id} id={m.id} memory={m} selected={m.id === selectedId} when={when(m.updatedAt)} fullWhen={full(m.updatedAt)} />
        ))}
      </ul>
      {list.items.length < list.total ? (
        <div className="mem-more">
          <span>{t('memories.showing', { shown: formatCount(list.items.length, locale), total: formatCount(list.total, locale) })}</span>
          <button type="button" className="button small" disabled={list.loading} onClick={() => void useMemories.getState().loadMore()}>
            {t('memories.loadMore')}
          </button>
        </div>
      ) : null}
    </>
  );
}

function Placeholder() {
  const { t } = useTranslation();
  return (
    <div className="mem-placeholder">
      <Icon name="memories" size={28} />
      <p>{t('memories.pickOne')}</p>
    </div>
  );
}

export function MemoriesView() {
  const { t } = useTranslation();
  const panel = useMemories((s) => s.panel);
  const selectedId = useMemories((s) => s.selectedId);
  const list = useMemories((s) => s.list);
  const query = useMemories((s) => s.query);
  const filters = useMemories((s) => s.filters);
  const anyAtAll = useMemories((s) => s.anyAtAll);
  const openAdd = useMemories((s) => s.openAdd);

  useEffect(() => {
    // Opening the view shows the memories as they are now (changes elsewhere were not followed).
    const s = useMemories.getState();
    if (s.query.trim()) void s.runSearch();
    else void s.refreshList();
    if (s.detail?.loaded) void s.loadDetail(s.detail.id, true);
  }, []);

  const nothingAtAll = !query.trim() && list.loaded && !list.items.length && filtersAreDefault(filters) && anyAtAll === false;

  return (
    <div className="memories" data-testid="view-memories" data-panel={panel} data-empty={nothingAtAll || undefined}>
      <section className="mem-main" aria-labelledby="memories-title">
        <header className="mem-head">
          <div className="mem-head-title">
            <h1 className="page-title" id="memories-title">
              {t('memories.title')}
            </h1>
            {list.loaded && !query.trim() && list.total > 0 ? <span className="mem-total">{t('memories.count', { count: list.total })}</span> : null}
          </div>
          {!nothingAtAll || panel === 'add' ? (
            <button type="button" className="button primary small" data-testid="memory-add" aria-expanded={panel === 'add'} onClick={openAdd}>
              <Icon name="plus" size={16} />
              {t('memories.add')}
            </button>
          ) : null}
        </header>
        {nothingAtAll ? (
          panel === 'add' ? null : (
            <NothingYet />
          )
        ) : (
          <>
            <div className="mem-tools">
              <SearchBox />
              <Filters />
            </div>
            <div className="mem-list">
              <MemoryList />
            </div>
          </>
        )}
      </section>
      <aside className="mem-side" aria-label={panel === 'add' ? t('memories.addForm.title') : t('memories.detail.label')}>
        {panel === 'add' ? (
          <AddMemory />
        ) : panel === 'detail' && selectedId !== null ? (
          <MemoryDetailPanel key={selectedId} id={selectedId} />
        ) : nothingAtAll ? null : (
          <Placeholder />
        )}
      </aside>
    </div>
  );
}
