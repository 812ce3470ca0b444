// Settings → Models → On this computer: the on-device models Anima offers, each with its size,
// languages, licence and what it is good for, and its state — Download; a progress bar with
// percent, speed and time left, and Cancel; Resume after a stop; Installed with its size on disk,
// "Use for memory search" (embedding models) and Delete (confirmed: downloaded bytes cannot be
// undone). Errors in words with a retry; the model host (a mirror) under Advanced.
import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import type { LocalModel, LocalModelTask, ModelDownloadProgress } from '../../../shared/api.js';
import { useFleeting } from '../../app/hooks.js';
import { ErrorNote } from '../../components/ErrorNote.js';
import { Icon } from '../../components/Icon.js';
import { RetryNote } from '../../components/LoadPanel.js';
import { currentLocale } from '../../i18n/index.js';
import { reportError, useApp } from '../../stores/app.js';
import { formatBytes, languageNames, percentDone, searchModel, timeLeft, useModels } from '../../stores/models.js';
import { useProviders } from '../../stores/providers.js';
import { EmbeddingHint, ProblemHint, SearchingHint, SearchSource, ServerSearchHint } from './SearchSource.js';
import { SwitchField } from './SwitchField.js';

const DEFAULT_HOST = 'https://huggingface.co';

/** The UI's own words for what each catalogue model is good for; other ids fall back to the host's English. */
const CATALOG_WORDS: Record<string, string> = {
  'Xenova/multilingual-e5-small': 'e5Small',
  'onnx-community/Qwen2.5-0.5B-Instruct': 'qwen05',
  'HuggingFaceTB/SmolLM2-360M-Instruct': 'smol360',
  'onnx-community/Qwen2.5-1.5B-Instruct': 'qwen15',
};

/** The same check as the host's (shared/api.ts modelSettings): http(s), no credentials. */
export function isModelHost(value: string): boolean {
  try {
    const url = new URL(value.trim());
    return (url.protocol === 'https:' || url.protocol === 'http:') && !url.username && !url.password;
  } catch {
    return false;
  }
}

function ProgressLine({ model, progress }: { model: LocalModel; progress: ModelDownloadProgress | null }) {
  const { t } = useTranslation();
  const locale = currentLocale();
  const phase = progress?.phase ?? 'checking';
  const known = progress !== null && progress.bytesTotal > 0 && phase !== 'checking';
  const pct = phase === 'installing' || phase === 'done' ? 100 : percentDone(progress);
  const bytes = known
    ? t('models.local.progressBytes', { done: formatBytes(progress.bytesDone, locale), total: formatBytes(progress.bytesTotal, locale) })
    : '';
  const left = timeLeft(progress?.secondsLeft ?? null);
  const headline =
    phase === 'checking'
      ? t('models.local.phaseChecking')
      : phase === 'installing' || phase === 'done'
        ? t('models.local.phaseInstalling')
        : t('models.local.progressValue', { percent: pct });
  const details: string[] = [];
  if (phase === 'downloading' && known) {
    details.push(bytes);
    if (progress.bytesPerSecond > 0) details.push(t('models.local.speed', { speed: formatBytes(progress.bytesPerSecond, locale) }));
    details.push(left.key === 'estimating' ? t('models.local.estimating') : t(`models.local.${left.key}`, { count: left.count }));
  }
  return (
    <div className="lm-progress" data-testid="model-progress">
      <div className="lm-progress-top">
        <span className="lm-progress-headline" data-testid="model-progress-percent">
          {headline}
        </span>
        {details.length ? (
          <span className="lm-progress-details" data-testid="model-progress-details">
            {details.join(' · ')}
          </span>
        ) : null}
      </div>
      <div
        className={known || phase !== 'checking' ? 'progress-track lm-track' : 'progress-track lm-track indeterminate'}
        role="progressbar"
        aria-label={t('models.local.progressLabel', { name: model.name })}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={known || phase !== 'checking' ? pct : undefined}
        aria-valuetext={known || phase !== 'checking' ? [headline, ...details].join(', ') : headline}
      >
        <span className="progress-fill" style={{ width: `${known || phase !== 'checking' ? pct : 30}%` }} />
      </div>
    </div>
  );
}

function Confirm({
  text,
  extra,
  confirmLabel,
  onCancel,
  onConfirm,
}: {
  text: string;
  extra: string[];
  confirmLabel: string;
  onCancel: () => void;
  onConfirm: () => void;
}) {
  const { t } = useTranslation();
  return (
    <div
      className="confirm lm-confirm"
      role="alertdialog"
      aria-label={text}
      data-testid="model-confirm"
      onKeyDown={(e) => {
        if (e.key === 'Escape') {
          e.stopPropagation();
          onCancel();
        }
      }}
    >
      <p>{text}</p>
      {extra.map((line) => (
        <p key={line} className="lm-confirm-extra">
          {line}
        </p>
      ))}
      <div className="confirm-actions">
        <button type="button" className="button ghost small" onClick={onCancel} autoFocus>
          {t('common.cancel')}
        </button>
        <button type="button" className="button danger small" data-testid="model-confirm-delete" onClick={onConfirm}>
          {confirmLabel}
        </button>
      </div>
    </div>
  );
}

function ModelCard({ model: m }: { model: LocalModel }) {
  const { t } = useTranslation();
  const locale = currentLocale();
  const pending = useModels((s) => s.pending[m.id]);
  const [confirming, setConfirming] = useState(false);
  const card = useRef<HTMLLIElement>(null);
  const hadFocus = useRef(false);

  // Download becomes Cancel becomes Delete: keep the keyboard in the card when its buttons change;
  // a confirmation that closes gives focus back to the button that opened it.
  const wasConfirming = useRef(false);
  useEffect(() => {
    const closedConfirm = wasConfirming.current && !confirming;
    wasConfirming.current = confirming;
    const active = document.activeElement;
    if (!hadFocus.current || (active && active !== document.body && document.body.contains(active))) return;
    const opener = closedConfirm ? card.current?.querySelector<HTMLButtonElement>('[data-testid="model-delete"], [data-testid="model-discard"]') : null;
    if (opener) return void opener.focus();
    for (const where of ['.lm-actions', '.lm-progress-row', '.error-note-actions']) {
      const button = card.current?.querySelector<HTMLButtonElement>(`${where} button:not(:disabled)`);
      if (button) return void button.focus();
    }
  }, [m.state, confirming]);

  const words = CATALOG_WORDS[m.id];
  const goodFor = words ? t(`models.local.catalog.${words}`) : m.goodFor;
  const langs = languageNames(m.languages, locale);
  const size =
    m.installed !== null
      ? formatBytes(m.installed.bytesOnDisk, locale)
      : m.progress && m.progress.bytesTotal > 0
        ? formatBytes(m.progress.bytesTotal, locale)
        : t('models.local.approxSize', { size: formatBytes(m.approxBytes, locale) });
  const meta = [
    size,
    langs.more ? t('models.local.languagesMore', { list: langs.list, count: langs.more }) : langs.list,
    t('models.local.licence', { licence: m.licence }),
  ];
  const connectionNames = m.usedBy.providers.map((p) => `“${p.name}”`).join(', ');

  const act = (run: () => Promise<unknown>) => {
    void run().catch(reportError);
  };
  const download = () => act(() => useModels.getState().download(m.id));
  const cancel = () => act(() => useModels.getState().cancel(m.id));
  const remove = () => {
    setConfirming(false);
    const partial = m.state !== 'installed';
    act(async () => {
      await useModels.getState().remove(m.id);
      useApp.getState().toast({ tone: 'info', text: t(partial ? 'models.local.discardedToast' : 'models.local.deletedToast', { name: m.name }) });
    });
  };
  const searchWithIt = (on: boolean) =>
    act(async () => {
      await useModels.getState().useForEmbeddings(on ? m.id : null);
      useApp.getState().toast({ tone: 'info', text: on ? t('models.local.searchOnToast', { name: m.name }) : t('models.local.searchOffToast') });
    });
  const talkWithIt = () =>
    act(async () => {
      await useProviders
        .getState()
        .save({ kind: 'local', name: m.name, baseUrl: '', model: m.id, ...(m.contextLength ? { contextTokens: m.contextLength } : {}) });
      useApp.getState().toast({ tone: 'info', text: t('models.local.chatAddedToast', { name: m.name }) });
      // The host makes the first connection the one for conversations; the list shows who uses what.
      await Promise.all([useApp.getState().reloadSettings(), useModels.getState().refresh()]);
    });

  let status: ReactNode = null;
  let actions: ReactNode = null;
  const failed = m.error !== null && !confirming && (m.state === 'available' || m.state === 'partial');
  const busy = pending !== undefined;
  if (confirming) {
    const extra: string[] = [];
    if (m.usedBy.embeddings) extra.push(t('models.local.deleteInSearch'));
    if (m.usedBy.providers.length) extra.push(t('models.local.deleteInChat', { names: connectionNames }));
    actions = (
      <Confirm
        text={
          m.state === 'installed'
            ? t('models.local.deleteConfirm', { name: m.name, size: formatBytes(m.installed?.bytesOnDisk ?? m.approxBytes, locale) })
            : t('models.local.discardConfirm', { size: formatBytes(m.partialBytes, locale) })
        }
        extra={m.state === 'installed' ? extra : []}
        confirmLabel={m.state === 'installed' ? t('models.local.delete') : t('models.local.discard')}
        onCancel={() => setConfirming(false)}
        onConfirm={remove}
      />
    );
  } else if (m.state === 'downloading') {
    status = (
      <div className="lm-progress-row">
        <ProgressLine model={m} progress={m.progress} />
        <button
          type="button"
          className="button small"
          data-testid="model-cancel"
          aria-label={t('models.local.cancelLabel', { name: m.name })}
          disabled={pending === 'cancel'}
          onClick={cancel}
        >
          {t('models.local.cancel')}
        </button>
      </div>
    );
  } else if (m.state === 'installed') {
    status = (
      <p className="lm-status lm-installed" data-testid="model-installed">
        <Icon name="check" size={16} />
        {t('models.local.installed', { size: formatBytes(m.installed?.bytesOnDisk ?? 0, locale) })}
      </p>
    );
    actions = (
      <>
        {m.task === 'embedding' ? (
          m.usedBy.embeddings ? (
            <button type="button" className="button small" data-testid="model-stop-using" disabled={busy} onClick={() => searchWithIt(false)}>
              {t('models.local.stopUsing')}
            </button>
          ) : (
            <button type="button" className="button primary small" data-testid="model-use-search" disabled={busy} onClick={() => searchWithIt(true)}>
              {t('models.local.useForSearch')}
            </button>
          )
        ) : !m.usedBy.providers.length ? (
          <button
            type="button"
            className="button small"
            data-testid="model-use-chat"
            title={t('models.local.useForChatHelp')}
            disabled={busy}
            onClick={talkWithIt}
          >
            {t('models.local.useForChat')}
          </button>
        ) : null}
        <button
          type="button"
          className="button ghost small"
          data-testid="model-delete"
          aria-label={t('models.local.deleteLabel', { name: m.name })}
          disabled={busy}
          onClick={() => setConfirming(true)}
        >
          {t('models.local.delete')}
        </button>
      </>
    );
  } else {
    // available or partial, perhaps after a failure (then the buttons sit in the error note)
    const partial = m.state === 'partial';
    if (partial && !m.error) {
      status = (
        <p className="lm-status" data-testid="model-partial">
          {t('models.local.stoppedAt', { size: formatBytes(m.partialBytes, locale) })}
        </p>
      );
    }
    actions = (
      <>
        <button
          type="button"
          className="button primary small"
          data-testid={partial ? 'model-resume' : 'model-download'}
          aria-label={
            m.error
              ? undefined
              : partial
                ? t('models.local.resumeLabel', { name: m.name })
                : t('models.local.downloadLabel', { name: m.name, size: formatBytes(m.approxBytes, locale) })
          }
          disabled={busy}
          onClick={download}
        >
          {pending === 'download' ? <span className="spinner" aria-hidden="true" /> : <Icon name="arrowDown" size={15} />}
          {m.error ? t('models.local.retry') : partial ? t('models.local.resume') : t('models.local.download')}
        </button>
        {partial ? (
          <button type="button" className="button ghost small" data-testid="model-discard" disabled={busy} onClick={() => setConfirming(true)}>
            {t('models.local.discard')}
          </button>
        ) : null}
      </>
    );
  }

  return (
    <li
      ref={card}
      className={actions && !failed ? 'lm-card' : 'lm-card solo'}
      data-testid="local-model"
      data-id={m.id}
      data-state={m.state}
      onFocus={() => (hadFocus.current = true)}
      onBlur={(e) => {
        if (e.relatedTarget && !e.currentTarget.contains(e.relatedTarget as Node)) hadFocus.current = false;
      }}
    >
      <div className="lm-main">
        <div className="lm-title">
          <span className="lm-name">{m.name}</span>
          {m.testOnly ? <span className="badge">{t('models.local.testModel')}</span> : null}
          {m.usedBy.embeddings && m.state === 'installed' ? (
            <span className="badge badge-accent" data-testid="model-used-search">
              {t('models.local.usedForSearch')}
            </span>
          ) : null}
          {m.usedBy.providers.length ? <span className="badge badge-accent">{t('models.local.usedByConnections', { names: connectionNames })}</span> : null}
        </div>
        <p className="lm-meta">{meta.join(' · ')}</p>
        <p className="lm-good">{goodFor}</p>
        {status}
        {failed ? (
          <ErrorNote compact error={m.error}>
            {m.error?.code === 'model_disk_full' && m.error.freeBytes !== undefined && m.error.neededBytes !== undefined ? (
              <p className="lm-disk" data-testid="model-disk-numbers">
                {t('models.local.diskNumbers', { needed: formatBytes(m.error.neededBytes, locale), free: formatBytes(m.error.freeBytes, locale) })}
              </p>
            ) : null}
            {actions}
          </ErrorNote>
        ) : null}
      </div>
      {actions && !failed ? <div className={confirming ? 'lm-actions confirming' : 'lm-actions'}>{actions}</div> : null}
    </li>
  );
}

function ModelGroup({ task, models }: { task: LocalModelTask; models: LocalModel[] }) {
  const { t } = useTranslation();
  const uid = useId();
  if (!models.length) return null;
  return (
    <section className="lm-group" aria-labelledby={uid} data-testid={`local-models-${task}`}>
      <h4 className="lm-group-title" id={uid}>
        {t(`models.local.groups.${task}`)}
      </h4>
      <p className="help lm-group-help">{t(`models.local.groupHelp.${task}`)}</p>
      <ul className="lm-list">
        {models.map((m) => (
          <ModelCard key={m.id} model={m} />
        ))}
      </ul>
    </section>
  );
}

function SearchHint({ items }: { items: LocalModel[] }) {
  const { t } = useTranslation();
  const search = searchModel(items);
  const status = useModels((s) => s.embeddings);
  // A model server's embedding model has a line of its own.
  if (status?.source === 'server' && status.state !== 'off') return <ServerSearchHint status={status} meaningSwitch={<MeaningSwitch />} />;
  // The model the host is using (or failing to use) for memory search, even if its files are gone.
  const inUse = status && status.state !== 'off' ? items.find((m) => m.id === status.model) : undefined;
  if (status && inUse) {
    const name = inUse.name;
    if (status.state === 'unavailable') {
      return (
        <ProblemHint kind="unavailable" detail={status.error}>
          {t('models.local.searchUnavailable', { name })}
          {inUse.state !== 'installed' ? ` ${t('models.local.searchRedownload')}` : null}
        </ProblemHint>
      );
    }
    if (status.state === 'embedding') {
      return (
        <EmbeddingHint
          done={status.done}
          total={status.total}
          text={
            status.total > 0
              ? t('models.local.searchEmbedding', { name, done: status.done.toLocaleString(), total: status.total.toLocaleString() })
              : t('models.local.searchLoading', { name })
          }
        />
      );
    }
    return (
      <SearchingHint searching={status.searching} meaningSwitch={<MeaningSwitch />}>
        {status.searching ? t('models.local.searchByMeaning', { name }) : t('models.local.searchRepeats', { name })}
      </SearchingHint>
    );
  }
  return (
    <p className="lm-hint" data-testid="search-hint" data-kind={search?.chosen ? 'loading' : search ? 'ready' : 'words'}>
      <Icon name="sparkle" size={16} />
      {search?.chosen
        ? t('models.local.searchLoading', { name: search.model.name })
        : search
          ? t('models.local.searchReady', { name: search.model.name })
          : t('models.local.searchByWords')}
    </p>
  );
}

/** Weight recall gives meaning when the person turns it on (settings.memory.vectorWeight); half of full text's, like fuzzy words. */
const MEANING_WEIGHT = 0.5;

/** Recall's vector branch: off by default until measured with a real model on real conversations. */
function MeaningSwitch() {
  const { t } = useTranslation();
  const uid = useId();
  const settings = useApp((s) => s.settings);
  if (!settings) return null;
  const on = (settings.memory.vectorWeight ?? 0) > 0;
  const toggle = (checked: boolean) =>
    void useApp
      .getState()
      .updateSettings({ memory: { ...settings.memory, vectorWeight: checked ? MEANING_WEIGHT : 0 } })
      .catch(reportError);
  return (
    <SwitchField
      id={uid}
      testId="search-by-meaning"
      className="lm-meaning"
      checked={on}
      onChange={toggle}
      label={t('models.local.meaningSwitch')}
      help={t('models.local.meaningSwitchHelp')}
    />
  );
}

function ModelHostSetting() {
  const { t } = useTranslation();
  const uid = useId();
  const host = useApp((s) => s.settings?.models.host ?? DEFAULT_HOST);
  const dataDir = useApp((s) => s.info?.dataDir ?? null);
  const [text, setText] = useState(host);
  const [invalid, setInvalid] = useState(false);
  const [saved, setSaved] = useFleeting(false, 2400);
  const input = useRef<HTMLInputElement>(null);

  useEffect(() => {
    if (document.activeElement !== input.current) setText(host);
  }, [host]);

  const save = (value: string) => {
    const next = value.trim().replace(/\/+$/, '');
    if (!isModelHost(next)) {
      setInvalid(true);
      return;
    }
    setInvalid(false);
    setText(next);
    if (next === host) return;
    void useApp
      .getState()
      .updateSettings({ models: { host: next } })
      .then(() => setSaved(true), reportError);
  };

  const sep = dataDir?.includes('\\') ? '\\' : '/';
  return (
    <details className="advanced lm-advanced" data-testid="models-advanced">
      <summary>
        <Icon name="arrowDown" size={14} className="advanced-caret" />
        {t('models.local.advanced')}
      </summary>
      <div className="advanced-body">
        <div className="field lm-host">
          <label htmlFor={`${uid}-host`}>{t('models.local.hostLabel')}</label>
          <form
            className="lm-host-row"
            onSubmit={(e) => {
              e.preventDefault();
              save(text);
            }}
          >
            <input
              ref={input}
              id={`${uid}-host`}
              className="input mono"
              type="url"
              inputMode="url"
              spellCheck={false}
              autoComplete="off"
              data-testid="model-host-input"
              value={text}
              aria-invalid={invalid || undefined}
              aria-describedby={`${uid}-help${invalid ? ` ${uid}-err` : ''}`}
              onChange={(e) => {
                setText(e.target.value);
                if (invalid && isModelHost(e.target.value)) setInvalid(false);
              }}
            />
            <button type="submit" className="button small" data-testid="model-host-save" disabled={text.trim().replace(/\/+$/, '') === host}>
              {t('common.save')}
            </button>
          </form>
          {invalid ? (
            <p className="help danger-text" id={`${uid}-err`} role="alert">
              {t('models.local.hostInvalid')}
            </p>
          ) : null}
          {saved ? (
            <p className="adv-saved" role="status">
              <Icon name="check" size={14} />
              {t('models.local.hostSaved')}
            </p>
          ) : null}
          <p className="help" id={`${uid}-help`}>
            {t('models.local.hostHelp')}{' '}
            {host !== DEFAULT_HOST ? (
              <button type="button" className="link-button" data-testid="model-host-default" onClick={() => save(DEFAULT_HOST)}>
                {t('models.local.hostDefault')}
              </button>
            ) : null}
          </p>
        </div>
        {dataDir ? <p className="help lm-folder">{t('models.local.folder', { path: `${dataDir}${sep}models` })}</p> : null}
      </div>
    </details>
  );
}

/** Says when a download ends — installed, failed or stopped — without announcing every percent. */
function Announcer({ items }: { items: LocalModel[] }) {
  const { t } = useTranslation();
  const change = useModels((s) => s.lastChange);
  const name = change ? (items.find((m) => m.id === change.id)?.name ?? change.id) : '';
  const text = !change
    ? ''
    : change.failed
      ? t('models.local.announceFailed', { name })
      : change.state === 'installed'
        ? t('models.local.announceInstalled', { name })
        : t('models.local.announceStopped', { name });
  return (
    <p className="visually-hidden" role="status" aria-live="polite" data-testid="models-announcer">
      {text}
    </p>
  );
}

export function LocalModels() {
  const { t } = useTranslation();
  const uid = useId();
  const items = useModels((s) => s.items);
  const loaded = useModels((s) => s.loaded);
  const error = useModels((s) => s.error);

  useEffect(() => {
    void useModels
      .getState()
      .refresh()
      .catch(() => {});
  }, []);

  return (
    <section className="local-models" aria-labelledby={uid} data-testid="local-models">
      {items.length ? (
        // Memory search's source (words, this device, the model server) and where it stands, first:
        // the downloads below are one way to it.
        <section className="search-source-section" aria-labelledby={`${uid}-search`} data-testid="memory-search">
          <h3 className="subhead" id={`${uid}-search`}>
            {t('models.local.source.title')}
          </h3>
          <SearchSource items={items} />
          <SearchHint items={items} />
        </section>
      ) : null}
      <h3 className="subhead" id={uid}>
        {t('models.local.title')}
      </h3>
      <p className="help lm-intro">{t('models.local.intro')}</p>
      {error && !items.length ? (
        <RetryNote
          error={error}
          onRetry={() =>
            void useModels
              .getState()
              .refresh()
              .catch(() => {})
          }
        />
      ) : null}
      {!loaded ? (
        <p className="detect-status" role="status">
          <span className="spinner" aria-hidden="true" /> {t('common.loading')}
        </p>
      ) : null}
      {items.length ? (
        <>
          <ModelGroup task="embedding" models={items.filter((m) => m.task === 'embedding')} />
          <ModelGroup task="chat" models={items.filter((m) => m.task === 'chat')} />
        </>
      ) : null}
      <ModelHostSetting />
      <Announcer items={items} />
    </section>
  );
}
