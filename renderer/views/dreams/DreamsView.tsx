// Dreams: a quiet book. The contents — dates and titles — and, opened, one dream to a page in
// generous type. A dream is never presented as fact: every page says so.
import { useEffect, useRef, type KeyboardEvent } from 'react';
import { useTranslation } from 'react-i18next';
import type { DiaryBlock } from '../../../shared/api.js';
import { useDayLabels } from '../../app/hooks.js';
import { Icon } from '../../components/Icon.js';
import { LoadPanel } from '../../components/LoadPanel.js';
import { paragraphs } from '../../lib/days.js';
import { useDiary } from '../../stores/diary.js';
import { NightsEmpty } from '../sleep/NightsEmpty.js';

/** Arrow keys, Home and End move through the contents, as in any list. */
function onListKey(e: KeyboardEvent<HTMLOListElement>) {
  if (!['ArrowDown', 'ArrowUp', 'Home', 'End'].includes(e.key)) return;
  const items = [...e.currentTarget.querySelectorAll<HTMLButtonElement>('.dream-item')];
  const at = items.indexOf(document.activeElement as HTMLButtonElement);
  if (at < 0) return;
  e.preventDefault();
  const next = e.key === 'Home' ? 0 : e.key === 'End' ? items.length - 1 : Math.max(0, Math.min(items.length - 1, at + (e.key === 'ArrowDown' ? 1 : -1)));
  items[next]?.focus();
}

function DreamList({ dreams, returnTo }: { dreams: DiaryBlock[]; returnTo: number | null }) {
  const { t } = useTranslation();
  const { long } = useDayLabels();
  const list = useRef<HTMLOListElement>(null);

  useEffect(() => {
    // Back from a page: the keyboard is where it was, on that dream.
    if (returnTo === null) return;
    list.current?.querySelector<HTMLButtonElement>(`.dream-item[data-id="${returnTo}"]`)?.focus();
  }, [returnTo]);

  return (
    <ol ref={list} className="dream-list" aria-label={t('dreams.listLabel')} onKeyDown={onListKey}>
      {dreams.map((d) => (
        <li key={d.id}>
          <button
            type="button"
            className="dream-item"
            data-testid="dream-item"
            data-id={d.id}
            data-day={d.day}
            onClick={() => useDiary.getState().openDream(d.id)}
          >
            <time className="dream-item-day" dateTime={d.day}>
              {long(d.day)}
            </time>
            <span className="dream-item-title">{d.title?.trim() || t('dreams.untitled')}</span>
            <Icon name="arrowDown" size={16} className="dream-item-go" />
          </button>
        </li>
      ))}
    </ol>
  );
}

function DreamReader({ dream, older, newer }: { dream: DiaryBlock; older: DiaryBlock | null; newer: DiaryBlock | null }) {
  const { t } = useTranslation();
  const { long } = useDayLabels();
  const heading = useRef<HTMLHeadingElement>(null);
  const open = useDiary((s) => s.openDream);

  useEffect(() => {
    heading.current?.focus();
  }, [dream.id]);

  useEffect(() => {
    const onKey = (e: globalThis.KeyboardEvent) => {
      if (e.defaultPrevented || e.isComposing || e.ctrlKey || e.metaKey || e.altKey) return;
      const target = e.target as HTMLElement | null;
      if (target && /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName)) return;
      if (e.key === 'Escape') {
        e.preventDefault();
        open(null);
      } else if (e.key === 'ArrowLeft' && newer) {
        e.preventDefault();
        open(newer.id);
      } else if (e.key === 'ArrowRight' && older) {
        e.preventDefault();
        open(older.id);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [open, older, newer]);

  const title = dream.title?.trim() || t('dreams.untitled');
  return (
    <article className="dream-reader" data-testid="dream-reader" data-id={dream.id} aria-labelledby="dream-title">
      <nav className="dream-bar" aria-label={t('dreams.pageNav')}>
        <button type="button" className="button ghost small" data-testid="dream-back" onClick={() => open(null)}>
          <Icon name="arrowDown" size={15} className="icon-left" />
          {t('dreams.back')}
        </button>
        <span className="dream-keys" aria-hidden="true">
          {newer || older ? t('dreams.keys') : t('dreams.keyEsc')}
        </span>
      </nav>
      <div className="dream-page">
        <p className="dream-day">
          <time dateTime={dream.day}>{long(dream.day)}</time>
        </p>
        <h1 className="dream-title" id="dream-title" ref={heading} tabIndex={-1}>
          {title}
        </h1>
        <p className="dream-note" data-testid="dream-note">
          <Icon name="dreams" size={15} />
          {t('dreams.notFact')}
        </p>
        <div className="dream-body">
          {paragraphs(dream.body).map((p, i) => (
            <p key={i}>{p}</p>
          ))}
        </div>
        {newer || older ? (
          <div className="dream-turn">
            {newer ? (
              <button type="button" className="button ghost small" onClick={() => open(newer.id)}>
                <Icon name="arrowDown" size={15} className="icon-left" />
                {t('dreams.newer')}
              </button>
            ) : (
              <span />
            )}
            {older ? (
              <button type="button" className="button ghost small" onClick={() => open(older.id)}>
                {t('dreams.older')}
                <Icon name="arrowDown" size={15} className="icon-right" />
              </button>
            ) : null}
          </div>
        ) : null}
      </div>
    </article>
  );
}

function Empty() {
  const { t } = useTranslation();
  return (
    <NightsEmpty
      view="dreams"
      buttonClassName="button"
      words={(auto, when) => ({ title: t('dreams.emptyTitle'), body: auto ? t('dreams.emptyBody', { when }) : t('dreams.emptyBodyManual') })}
    />
  );
}

export function DreamsView() {
  const { t } = useTranslation();
  const dreams = useDiary((s) => s.dreams);
  const openId = useDiary((s) => s.openDreamId);
  const lastOpen = useRef<number | null>(null);

  useEffect(() => {
    void useDiary.getState().refreshDreams();
  }, []);

  const at = openId === null ? -1 : dreams.items.findIndex((d) => d.id === openId);
  const open = at >= 0 ? dreams.items[at]! : null;
  const returnTo = open ? null : lastOpen.current;
  useEffect(() => {
    if (open) lastOpen.current = open.id;
  }, [open]);

  if (open) {
    return (
      <div className="dreams reading" data-testid="view-dreams">
        <DreamReader key={open.id} dream={open} newer={dreams.items[at - 1] ?? null} older={dreams.items[at + 1] ?? null} />
      </div>
    );
  }

  const empty = dreams.loaded && !dreams.items.length && !dreams.error;
  return (
    <div className="dreams" data-testid="view-dreams" data-empty={empty || undefined}>
      <div className="dreams-inner">
        <header className="diary-head">
          <h1 className="page-title">{t('dreams.title')}</h1>
          {dreams.items.length ? <p className="diary-intro">{t('dreams.intro')}</p> : null}
        </header>
        <LoadPanel error={dreams.items.length ? null : dreams.error} loaded={dreams.loaded} onRetry={() => void useDiary.getState().refreshDreams()}>
          {empty ? <Empty /> : <DreamList dreams={dreams.items} returnTo={returnTo} />}
        </LoadPanel>
      </div>
    </div>
  );
}
