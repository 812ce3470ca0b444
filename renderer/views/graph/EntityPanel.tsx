// One person, place or thing, in full: its names, how often and since when it comes up, what I know
// about it (the profile deep sleep keeps), the memories that mention it, its connections (with when
// they held), the conversations it came up in — and the edits: rename, another name, "these are the
// same", hide. Every edit is journalled by the host and says so with an Undo.
import { useEffect, useId, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { ApiError, type Entity, type EntityDetail, type EntityKind } from '../../../shared/api.js';
import { openMemory } from '../../app/actions.js';
import { useTimeFormat } from '../../app/hooks.js';
import { ErrorNote } from '../../components/ErrorNote.js';
import { Icon } from '../../components/Icon.js';
import { LoadPanel } from '../../components/LoadPanel.js';
import { useBusy } from '../../components/useEditor.js';
import { TypeBadge } from '../../components/MemoryBits.js';
import { currentLocale } from '../../i18n/index.js';
import { formatCount } from '../../lib/memories.js';
import { reportError, useApp } from '../../stores/app.js';
import { useChat } from '../../stores/chat.js';
import { sortRelations, useGraph, validityOf } from '../../stores/graph.js';
import { isNotFound } from '../../stores/loadable.js';
import { historyText } from './history.js';
import { useDayFormat, useRelationLabel } from './hooks.js';

export function KindDot({ kind }: { kind: EntityKind }) {
  return <span className={`kind-dot kind-${kind}`} aria-hidden="true" />;
}

/** A refusal from the host in words; for invalid input its own reason is the useful part. */
function ActionError({ error }: { error: unknown }) {
  const ownWords = error instanceof ApiError && (error.code === 'invalid_input' || error.code === 'conflict');
  return <ErrorNote error={error} compact detailVisible={ownWords} />;
}

/** What the toast's Undo does: take the change back, then say so (or say why not). */
function undoAction(changeId: number, t: (k: string) => string) {
  return {
    label: t('common.undo'),
    run: () => {
      void useGraph
        .getState()
        .undo(changeId)
        .then(() => useApp.getState().toast({ tone: 'info', text: t('graph.toasts.undone') }))
        .catch(reportError);
    },
  };
}

function TextForm({
  label,
  initial,
  testId,
  submitLabel,
  onSubmit,
  onCancel,
}: {
  label: string;
  initial: string;
  testId: string;
  submitLabel: string;
  onSubmit: (value: string) => Promise<void>;
  onCancel: () => void;
}) {
  const { t } = useTranslation();
  const [value, setValue] = useState(initial);
  const { busy, error, run } = useBusy();
  const input = useRef<HTMLInputElement>(null);
  const id = useId();

  useEffect(() => {
    input.current?.focus();
    input.current?.select();
  }, []);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    await run(() => onSubmit(value));
  };

  return (
    <form className="graph-form" onSubmit={(e) => void submit(e)} data-testid={`${testId}-form`}>
      <label htmlFor={id} className="graph-form-label">
        {label}
      </label>
      <input
        ref={input}
        id={id}
        className="input"
        data-testid={`${testId}-input`}
        value={value}
        maxLength={500}
        aria-invalid={error ? true : undefined}
        onChange={(e) => setValue(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Escape') {
            e.preventDefault();
            e.stopPropagation();
            onCancel();
          }
        }}
      />
      {error ? <ActionError error={error} /> : null}
      <div className="graph-form-actions">
        <button type="submit" className="button primary small" data-testid={`${testId}-save`} disabled={busy}>
          {submitLabel}
        </button>
        <button type="button" className="button ghost small" onClick={onCancel}>
          {t('common.cancel')}
        </button>
      </div>
    </form>
  );
}

/** "These are the same": find the other one, choose which name stays, confirm. */
function MergeForm({ entity, onDone }: { entity: Entity; onDone: () => void }) {
  const { t } = useTranslation();
  const [query, setQuery] = useState('');
  const [hits, setHits] = useState<Entity[]>([]);
  const [searched, setSearched] = useState(false);
  const [other, setOther] = useState<Entity | null>(null);
  const [keepThis, setKeepThis] = useState(true);
  const { busy, error, setError, run } = useBusy();
  const input = useRef<HTMLInputElement>(null);
  const id = useId();

  useEffect(() => input.current?.focus(), []);

  useEffect(() => {
    const q = query.trim();
    if (!q) {
      setHits([]);
      setSearched(false);
      return;
    }
    let live = true;
    const timer = setTimeout(() => {
      useGraph
        .getState()
        .searchOnly(q)
        .then((found) => {
          if (!live) return;
          setHits(found.filter((h) => h.id !== entity.id && h.status !== 'merged'));
          setSearched(true);
        })
        .catch((err: unknown) => live && setError(err));
    }, 150);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [query, entity.id, setError]);

  const keep = other ? (keepThis ? entity : other) : null;
  const gone = other ? (keepThis ? other : entity) : null;

  const confirm = async () => {
    if (!keep || !gone) return;
    await run(async () => {
      const result = await useGraph.getState().merge(keep.id, gone.id);
      useApp.getState().toast({ tone: 'info', text: t('graph.toasts.merged', { merge: gone.name, keep: keep.name }), action: undoAction(result.changeId, t) });
      onDone();
    });
  };

  return (
    <div className="graph-form graph-merge" data-testid="graph-merge-form">
      <label htmlFor={id} className="graph-form-label">
        {t('graph.actions.mergeTitle', { name: entity.name })}
      </label>
      {other ? (
        <>
          <fieldset className="graph-keep">
            <legend>{t('graph.actions.keepLabel')}</legend>
            {[entity, other].map((e) => (
              <label key={e.id} className="graph-keep-option">
                <input type="radio" name={`${id}-keep`} checked={keepThis === (e.id === entity.id)} onChange={() => setKeepThis(e.id === entity.id)} />
                <KindDot kind={e.kind} />
                <span>{e.name}</span>
              </label>
            ))}
          </fieldset>
          <p className="help">{t('graph.actions.mergeExplain', { merge: gone!.name, keep: keep!.name })}</p>
          {error ? <ActionError error={error} /> : null}
          <div className="graph-form-actions">
            <button type="button" className="button primary small" data-testid="graph-merge-confirm" disabled={busy} onClick={() => void confirm()}>
              {t('graph.actions.mergeConfirm')}
            </button>
            <button type="button" className="button ghost small" onClick={() => setOther(null)}>
              {t('common.back')}
            </button>
          </div>
        </>
      ) : (
        <>
          <input
            ref={input}
            id={id}
            type="search"
            className="input"
            data-testid="graph-merge-search"
            placeholder={t('graph.actions.mergeSearch')}
            value={query}
            maxLength={200}
            autoComplete="off"
            onChange={(e) => setQuery(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Escape') {
                e.preventDefault();
                e.stopPropagation();
                onDone();
              } else if (e.key === 'Enter' && hits[0]) {
                e.preventDefault();
                setOther(hits[0]);
              }
            }}
          />
          {hits.length ? (
            <ul className="graph-merge-hits" aria-label={t('graph.hitsLabel')}>
              {hits.map((h) => (
                <li key={h.id}>
                  <button type="button" className="graph-merge-hit" data-testid="graph-merge-hit" data-id={h.id} onClick={() => setOther(h)}>
                    <KindDot kind={h.kind} />
                    <span className="graph-hit-name">{h.name}</span>
                    <span className="graph-hit-kind">{t(`graph.kind.${h.kind}`)}</span>
                  </button>
                </li>
              ))}
            </ul>
          ) : searched ? (
            <p className="help">{t('graph.noHits', { query: query.trim() })}</p>
          ) : (
            <p className="help">{t('graph.actions.pickOther')}</p>
          )}
          {error ? <ActionError error={error} /> : null}
          <div className="graph-form-actions">
            <button type="button" className="button ghost small" onClick={onDone}>
              {t('common.cancel')}
            </button>
          </div>
        </>
      )}
    </div>
  );
}

type Editing = 'none' | 'rename' | 'alias' | 'merge';

function Actions({ entity }: { entity: Entity }) {
  const { t } = useTranslation();
  const [editing, setEditing] = useState<Editing>('none');
  const { busy, error, run } = useBusy();
  const fixed = entity.kind === 'self' || entity.kind === 'user';
  const hidden = entity.status === 'hidden';
  const back = useRef<HTMLButtonElement>(null);

  const done = () => {
    setEditing('none');
    requestAnimationFrame(() => back.current?.focus());
  };

  const toggleHidden = () =>
    run(async () => {
      const result = await useGraph.getState().setHidden(entity.id, !hidden);
      useApp.getState().toast({
        tone: 'info',
        text: t(hidden ? 'graph.toasts.unhidden' : 'graph.toasts.hidden', { name: result.entity.name }),
        action: undoAction(result.changeId, t),
      });
    });

  if (editing === 'rename') {
    return (
      <TextForm
        label={t('graph.actions.renameLabel')}
        initial={entity.name}
        testId="graph-rename"
        submitLabel={t('common.save')}
        onCancel={done}
        onSubmit={async (name) => {
          const before = entity.name;
          const result = await useGraph.getState().rename(entity.id, name);
          useApp
            .getState()
            .toast({ tone: 'info', text: t('graph.toasts.renamed', { before, name: result.entity.name }), action: undoAction(result.changeId, t) });
          done();
        }}
      />
    );
  }
  if (editing === 'alias') {
    return (
      <TextForm
        label={t('graph.actions.aliasLabel', { name: entity.name })}
        initial=""
        testId="graph-alias"
        submitLabel={t('graph.actions.aliasSave')}
        onCancel={done}
        onSubmit={async (alias) => {
          const result = await useGraph.getState().addAlias(entity.id, alias);
          useApp.getState().toast({
            tone: 'info',
            text: t('graph.toasts.aliased', { alias: alias.trim(), name: result.entity.name }),
            action: undoAction(result.changeId, t),
          });
          done();
        }}
      />
    );
  }
  if (editing === 'merge') return <MergeForm entity={entity} onDone={done} />;

  return (
    <>
      <div className="graph-actions" role="group" aria-label={t('graph.actions.label')}>
        <button type="button" ref={back} className="button small" data-testid="graph-rename" disabled={busy} onClick={() => setEditing('rename')}>
          <Icon name="pencil" size={15} />
          {t('graph.actions.rename')}
        </button>
        <button type="button" className="button small" data-testid="graph-alias" disabled={busy} onClick={() => setEditing('alias')}>
          <Icon name="plus" size={15} />
          {t('graph.actions.alias')}
        </button>
        {!fixed ? (
          <button type="button" className="button small" data-testid="graph-merge" disabled={busy || hidden} onClick={() => setEditing('merge')}>
            <Icon name="graph" size={15} />
            {t('graph.actions.merge')}
          </button>
        ) : null}
        {!fixed ? (
          <button
            type="button"
            className="button small ghost"
            data-testid="graph-hide"
            aria-pressed={hidden}
            disabled={busy}
            onClick={() => void toggleHidden()}
          >
            <Icon name={hidden ? 'regenerate' : 'close'} size={15} />
            {hidden ? t('graph.actions.unhide') : t('graph.actions.hide')}
          </button>
        ) : null}
      </div>
      {error ? <ActionError error={error} /> : null}
    </>
  );
}

function Section({ title, count, children, testId }: { title: string; count?: number; children: ReactNode; testId: string }) {
  const id = useId();
  return (
    <section className="graph-section" aria-labelledby={id} data-testid={testId}>
      <h3 className="graph-section-title" id={id}>
        {title}
        {count ? <span className="graph-section-count">{count}</span> : null}
      </h3>
      {children}
    </section>
  );
}

function Loaded({ data }: { data: EntityDetail }) {
  const { t } = useTranslation();
  const { when, full } = useTimeFormat();
  const day = useDayFormat();
  const relationLabel = useRelationLabel();
  const locale = currentLocale();
  const mode = useGraph((s) => s.slice.data?.mode);
  const centerId = useGraph((s) => s.slice.data?.centerId ?? null);
  const { entity, profile, facts, relations, conversations, history } = data;
  const fixed = entity.kind === 'self' || entity.kind === 'user';
  const sorted = sortRelations(relations);
  const undoable = history.find((c) => c.undoneBy === null && c.action !== 'undo') ?? null;

  const openConversation = (id: string) => {
    void useChat.getState().open(id);
    useApp.getState().setView('chat');
  };

  return (
    <>
      <div className="graph-panel-head">
        <p className="graph-kind-line">
          <KindDot kind={entity.kind} />
          <span>{t(`graph.kind.${entity.kind}`)}</span>
          {entity.status === 'hidden' ? <span className="badge">{t('graph.panel.hiddenBadge')}</span> : null}
        </p>
        <h2 className="graph-name" data-testid="graph-panel-name">
          {entity.name}
        </h2>
        {entity.aliases.length ? (
          <p className="graph-aliases" data-testid="graph-aliases">
            <span className="visually-hidden">{t('graph.panel.aliases')}: </span>
            {entity.aliases.map((a) => (
              <span key={a} className="badge">
                {a}
              </span>
            ))}
          </p>
        ) : null}
      </div>

      {entity.status === 'hidden' ? <p className="graph-note-inline">{t('graph.panel.hiddenNote')}</p> : null}

      <dl className="graph-facts">
        <div>
          <dt>{t('graph.panel.mentionsLabel')}</dt>
          <dd data-testid="graph-mentions">{t('graph.panel.mentions', { count: entity.mentionCount, formatted: formatCount(entity.mentionCount, locale) })}</dd>
        </div>
        {entity.firstSeen ? (
          <div>
            <dt>{t('graph.panel.firstSeen')}</dt>
            <dd>
              <time dateTime={entity.firstSeen} title={full(entity.firstSeen)}>
                {when(entity.firstSeen)}
              </time>
            </dd>
          </div>
        ) : null}
        {entity.lastSeen ? (
          <div>
            <dt>{t('graph.panel.lastSeen')}</dt>
            <dd>
              <time dateTime={entity.lastSeen} title={full(entity.lastSeen)}>
                {when(entity.lastSeen)}
              </time>
            </dd>
          </div>
        ) : null}
      </dl>

      <Actions entity={entity} />

      {mode === 'ego' && centerId !== entity.id && entity.status === 'active' ? (
        <button type="button" className="button small graph-explore" data-testid="graph-explore" onClick={() => void useGraph.getState().recenter(entity.id)}>
          <Icon name="graph" size={15} />
          {t('graph.panel.explore')}
        </button>
      ) : null}

      <Section title={t('graph.panel.profile')} testId="graph-profile">
        {profile ? (
          <button type="button" className="graph-memory graph-profile-text" onClick={() => openMemory(profile.id)}>
            {profile.content}
          </button>
        ) : (
          <p className="help">{fixed ? t('graph.panel.noProfileFixed') : t('graph.panel.noProfile')}</p>
        )}
      </Section>

      <Section title={t('graph.panel.relations')} count={relations.length} testId="graph-relations">
        {sorted.length ? (
          <ul className="graph-relations">
            {sorted.map((r) => {
              const outgoing = r.source === entity.id;
              const v = validityOf(r);
              const co = r.relation === 'co_mention';
              return (
                <li
                  key={r.id}
                  className={r.validTo ? 'graph-relation ended' : 'graph-relation'}
                  data-testid="graph-relation"
                  data-relation={r.relation}
                  data-other={r.other.id}
                >
                  <span className="graph-relation-what">
                    {co ? (
                      <span className="graph-relation-verb">{t('graph.panel.coMention')}</span>
                    ) : outgoing ? (
                      <span className="graph-relation-verb">{relationLabel(r.relation)}</span>
                    ) : null}
                    <button type="button" className="link-button graph-relation-other" onClick={() => void useGraph.getState().pick(r.other)}>
                      <KindDot kind={r.other.kind} />
                      {r.other.name}
                    </button>
                    {!co && !outgoing ? <span className="graph-relation-verb">{relationLabel(r.relation)}</span> : null}
                    {!co && !outgoing ? <span className="graph-relation-verb">{entity.name}</span> : null}
                  </span>
                  <span className="graph-relation-when">
                    {v.key === 'fromUntil'
                      ? t('graph.panel.fromUntil', { from: day(v.from!), until: day(v.until!) })
                      : v.key === 'since'
                        ? t('graph.panel.since', { from: day(v.from!) })
                        : v.key === 'until'
                          ? t('graph.panel.until', { until: day(v.until!) })
                          : co
                            ? t('graph.panel.times', { count: r.weight, formatted: formatCount(Math.round(r.weight), locale) })
                            : null}
                  </span>
                </li>
              );
            })}
          </ul>
        ) : (
          <p className="help">{t('graph.panel.noRelations')}</p>
        )}
      </Section>

      <Section title={t('graph.panel.facts')} count={facts.length} testId="graph-facts">
        {facts.length ? (
          <ul className="graph-memories">
            {facts.map((m) => (
              <li key={m.id}>
                <button type="button" className="graph-memory" data-testid="graph-fact" onClick={() => openMemory(m.id)}>
                  <TypeBadge type={m.type} />
                  <span>{m.content}</span>
                </button>
              </li>
            ))}
          </ul>
        ) : (
          <p className="help">{t('graph.panel.noFacts')}</p>
        )}
      </Section>

      <Section title={t('graph.panel.conversations')} count={conversations.length} testId="graph-conversations">
        {conversations.length ? (
          <ul className="graph-convs">
            {conversations.map((c) => (
              <li key={c.id}>
                <button type="button" className="graph-conv" onClick={() => openConversation(c.id)}>
                  <Icon name="chat" size={15} />
                  <span className="graph-conv-title">{c.title || t('graph.panel.untitled')}</span>
                  <span className="graph-conv-meta">
                    {t('graph.panel.convMentions', { count: c.mentions, formatted: formatCount(c.mentions, locale) })} ·{' '}
                    <time dateTime={c.lastAt} title={full(c.lastAt)}>
                      {when(c.lastAt)}
                    </time>
                  </span>
                </button>
              </li>
            ))}
          </ul>
        ) : (
          <p className="help">{t('graph.panel.noConversations')}</p>
        )}
      </Section>

      {history.length ? (
        <Section title={t('graph.panel.history')} testId="graph-history">
          <ol className="graph-history">
            {history.map((c) => (
              <li key={c.id} data-undone={c.undoneBy !== null || undefined}>
                <span>{historyText(c, data, { t, relationLabel, day })}</span>
                <span className="graph-history-when">
                  {' · '}
                  <time dateTime={c.createdAt} title={full(c.createdAt)}>
                    {when(c.createdAt)}
                  </time>
                </span>
                {c.undoneBy !== null ? <span className="badge">{t('graph.panel.undone')}</span> : null}
                {undoable?.id === c.id ? (
                  <button
                    type="button"
                    className="link-button graph-history-undo"
                    data-testid="graph-history-undo"
                    onClick={() =>
                      void useGraph
                        .getState()
                        .undo(c.id)
                        .then(() => useApp.getState().toast({ tone: 'info', text: t('graph.toasts.undone') }))
                        .catch(reportError)
                    }
                  >
                    {t('common.undo')}
                  </button>
                ) : null}
              </li>
            ))}
          </ol>
        </Section>
      ) : null}
    </>
  );
}

export function EntityPanel({ id }: { id: number }) {
  const { t } = useTranslation();
  const detail = useGraph((s) => (s.detail?.id === id ? s.detail : null));
  const close = useGraph((s) => s.closePanel);
  const heading = useRef<HTMLDivElement>(null);

  return (
    <aside className="graph-panel" data-testid="graph-panel" data-id={id} aria-label={t('graph.panel.label')} ref={heading}>
      <div className="graph-panel-bar">
        <h2 className="graph-panel-title">{t('graph.panel.label')}</h2>
        <button
          type="button"
          className="icon-button small"
          data-testid="graph-panel-close"
          aria-label={t('graph.panel.close')}
          title={t('graph.panel.close')}
          onClick={close}
        >
          <Icon name="close" size={16} />
        </button>
      </div>
      <div className="graph-panel-body">
        {detail?.data ? (
          <Loaded data={detail.data} />
        ) : isNotFound(detail?.error) ? (
          <p className="graph-note-inline">{t('graph.panel.notFound')}</p>
        ) : (
          <LoadPanel error={detail?.error} loaded={false} onRetry={() => void useGraph.getState().loadDetail(id)} />
        )}
      </div>
    </aside>
  );
}
