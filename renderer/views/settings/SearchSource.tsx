// Settings → Models → memory search's source: by words only, the embedding model on this device, or
// the one the person's model server runs (an OpenAI-compatible or Ollama connection and the model's
// name there, picked from the server's own list). The server is asked before the choice is saved, and
// its refusal is shown in its words. The status line of a server's model — reading what was said
// before, ready, or paused because the server stopped answering — is ServerSearchHint.
import { useEffect, useId, useMemo, useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import type { EmbeddingsStatus, LocalModel, ProviderConfig } from '../../../shared/api.js';
import { ErrorNote } from '../../components/ErrorNote.js';
import { Icon } from '../../components/Icon.js';
import { reportError, useApp } from '../../stores/app.js';
import { searchModel, useModels } from '../../stores/models.js';
import { useProviders } from '../../stores/providers.js';
import '../../styles/settings/search-source.css';

type Source = 'words' | 'device' | 'server';

/** Connections whose servers can have an embedding model. */
const canEmbed = (p: ProviderConfig) => p.kind === 'openai-compatible' || p.kind === 'ollama';

/** Names that look like embedding models first (nomic-embed-text, bge-m3, mxbai-embed-large, all-minilm…), then the rest. */
export function embeddingModelsFirst(names: string[]): string[] {
  const looks = (n: string) => /embed|bge|e5|minilm|gte|nomic|mxbai|arctic|jina/i.test(n);
  return [...names.filter(looks), ...names.filter((n) => !looks(n))];
}

export function SearchSource({ items }: { items: LocalModel[] }) {
  const { t } = useTranslation();
  const uid = useId();
  const models = useApp((s) => s.settings?.models);
  const providers = useProviders((s) => s.items);
  const server = models?.serverEmbedding ?? null;
  const current: Source = server ? 'server' : models?.embedding ? 'device' : 'words';
  const [picked, setPicked] = useState<Source>(current);
  const [busy, setBusy] = useState(false);
  useEffect(() => setPicked(current), [current]);
  // The chosen on-device model even when its files are damaged (the line below says so), else one that is installed.
  const device = items.find((m) => m.id === models?.embedding) ?? searchModel(items)?.model ?? null;
  const deviceUsable = device !== null && (device.state === 'installed' || current === 'device');
  const eligible = providers.filter(canEmbed);

  const choose = (source: Source) => {
    setPicked(source);
    if (source === 'server') return; // saved by the form below, once the server said yes
    setBusy(true);
    void useModels
      .getState()
      .useForEmbeddings(source === 'device' && device ? device.id : null)
      .catch(reportError)
      .finally(() => setBusy(false));
  };

  return (
    <div className="search-source" data-testid="search-source" data-source={current}>
      <p className="help lm-intro">{t('models.local.source.help')}</p>
      <fieldset className="choice-group search-source-choices" disabled={busy}>
        <legend className="visually-hidden">{t('models.local.source.title')}</legend>
        <label className="choice" data-testid="search-source-words">
          <input type="radio" name={`${uid}-source`} checked={picked === 'words'} onChange={() => choose('words')} />
          <span>{t('models.local.source.words')}</span>
        </label>
        <label className="choice" data-testid="search-source-device" aria-disabled={!deviceUsable || undefined}>
          <input type="radio" name={`${uid}-source`} checked={picked === 'device'} disabled={!deviceUsable} onChange={() => choose('device')} />
          <span>{device && deviceUsable ? t('models.local.source.device', { name: device.name }) : t('models.local.source.deviceNone')}</span>
        </label>
        <label className="choice" data-testid="search-source-server" aria-disabled={!eligible.length || undefined}>
          <input type="radio" name={`${uid}-source`} checked={picked === 'server'} disabled={!eligible.length} onChange={() => choose('server')} />
          <span>
            {server ? t('models.local.source.server', { model: server.model }) : t('models.local.source.serverNone')}
            {!eligible.length ? <span className="search-source-note">{t('models.local.source.serverNoConnection')}</span> : null}
          </span>
        </label>
      </fieldset>
      {picked === 'server' && eligible.length ? <ServerModelForm connections={eligible} chosen={server} /> : null}
    </div>
  );
}

function ServerModelForm({ connections, chosen }: { connections: ProviderConfig[]; chosen: { providerId: string; model: string } | null }) {
  const { t } = useTranslation();
  const uid = useId();
  const chatId = useApp((s) => s.settings?.chatProviderId ?? null);
  const first = connections.find((c) => c.id === chosen?.providerId) ?? connections.find((c) => c.id === chatId) ?? connections[0]!;
  const [providerId, setProviderId] = useState(first.id);
  const [model, setModel] = useState(chosen?.model ?? '');
  const [listed, setListed] = useState<string[]>([]);
  const [asking, setAsking] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const connection = connections.find((c) => c.id === providerId) ?? first;

  // The server's own model list, for the picker (a failure leaves the field to type in).
  useEffect(() => {
    let live = true;
    setListed([]);
    void useProviders
      .getState()
      .test(`embed:${connection.id}`, { id: connection.id, kind: connection.kind, baseUrl: '', model: '' })
      .then((result) => {
        if (live && result?.ok) setListed(embeddingModelsFirst(result.models));
      });
    return () => {
      live = false;
    };
  }, [connection.id, connection.kind]);

  const options = useMemo(() => listed.filter((n) => n !== model), [listed, model]);
  const unchanged = chosen?.providerId === providerId && chosen.model === model.trim();

  const use = () => {
    setAsking(true);
    setError(null);
    void useModels
      .getState()
      .useServerForEmbeddings({ providerId, model: model.trim() })
      .then(() => useApp.getState().toast({ tone: 'info', text: t('models.local.source.usedToast', { model: model.trim() }) }))
      .catch(setError)
      .finally(() => setAsking(false));
  };

  return (
    <form
      className="search-server-form"
      data-testid="search-server-form"
      onSubmit={(e) => {
        e.preventDefault();
        if (model.trim() && !unchanged) use();
      }}
    >
      {connections.length > 1 ? (
        <div className="field">
          <label htmlFor={`${uid}-conn`}>{t('models.local.source.connection')}</label>
          <select
            id={`${uid}-conn`}
            className="input"
            data-testid="search-server-connection"
            value={providerId}
            onChange={(e) => setProviderId(e.target.value)}
          >
            {connections.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </select>
        </div>
      ) : null}
      <div className="field">
        <label htmlFor={`${uid}-model`}>{t('models.local.source.model', { connection: connection.name })}</label>
        <div className="search-server-row">
          <input
            id={`${uid}-model`}
            className="input mono"
            data-testid="search-server-model"
            list={`${uid}-listed`}
            spellCheck={false}
            autoComplete="off"
            placeholder={t('models.local.source.modelPlaceholder')}
            value={model}
            aria-describedby={`${uid}-help`}
            onChange={(e) => setModel(e.target.value)}
          />
          <datalist id={`${uid}-listed`}>
            {options.map((n) => (
              <option key={n} value={n} />
            ))}
          </datalist>
          <button type="submit" className="button primary small" data-testid="search-server-use" disabled={asking || !model.trim() || unchanged}>
            {asking ? <span className="spinner" aria-hidden="true" /> : null}
            {asking ? t('models.local.source.asking') : t('models.local.source.use')}
          </button>
        </div>
        <p className="help" id={`${uid}-help`}>
          {listed.length ? t('models.local.source.modelHelpListed', { count: listed.length }) : t('models.local.source.modelHelp')}
        </p>
      </div>
      {error ? <ErrorNote compact error={error} detailVisible /> : null}
    </form>
  );
}

/** The status line of a server's embedding model: reading, ready, paused (server away), or unusable. */
export function ServerSearchHint({ status, meaningSwitch }: { status: EmbeddingsStatus; meaningSwitch: ReactNode }) {
  const { t } = useTranslation();
  const model = status.model ?? '';
  const connection = status.connection ?? '';
  if (status.state === 'paused' || status.state === 'unavailable') {
    // Paused is the server's absence, not a fault of the choice: said calmly.
    return (
      <ProblemHint kind={status.state} source="server" paused={status.state === 'paused'} detail={status.error}>
        {status.state === 'paused' ? t('models.local.source.paused') : t('models.local.source.unavailable', { model })}
      </ProblemHint>
    );
  }
  if (status.state === 'embedding') {
    return (
      <EmbeddingHint
        done={status.done}
        total={status.total}
        source="server"
        text={
          status.total > 0
            ? t('models.local.source.embedding', { model, done: status.done.toLocaleString(), total: status.total.toLocaleString() })
            : t('models.local.source.loading', { model })
        }
      />
    );
  }
  return (
    <SearchingHint searching={status.searching} source="server" meaningSwitch={meaningSwitch}>
      {status.searching ? t('models.local.source.meaning', { model, connection }) : t('models.local.source.repeats', { model })}
    </SearchingHint>
  );
}

/**
 * Memory search's model cannot be used, or waits for its server: the words, and the host's or the
 * server's own (paths, runtime messages) folded away, there for a bug report.
 */
export function ProblemHint({
  kind,
  source,
  paused = false,
  detail,
  children,
}: {
  kind: 'paused' | 'unavailable';
  source?: 'server';
  /** Waiting, not failing: said calmly. */
  paused?: boolean;
  detail?: string | null;
  children: ReactNode;
}) {
  const { t } = useTranslation();
  return (
    <div className={paused ? 'lm-hint search-paused' : 'lm-hint lm-hint-warn'} data-testid="search-hint" data-kind={kind} data-source={source} role="status">
      <Icon name={paused ? 'server' : 'alert'} size={16} />
      <span>
        {children}
        {detail ? (
          <details className="error-note-detail">
            <summary>{t('common.details')}</summary>
            <code>{detail}</code>
          </details>
        ) : null}
      </span>
    </div>
  );
}

/** Memory search's model in use: for repeats only, or for recall by meaning too; and the switch between them. */
export function SearchingHint({
  searching,
  source,
  meaningSwitch,
  children,
}: {
  searching: boolean;
  source?: 'server';
  meaningSwitch: ReactNode;
  children: ReactNode;
}) {
  return (
    <div className="lm-hint lm-hint-on" data-testid="search-hint" data-kind={searching ? 'meaning' : 'repeats'} data-source={source}>
      <Icon name="check" size={16} />
      <div className="lm-hint-body">
        <span>{children}</span>
        {meaningSwitch}
      </div>
    </div>
  );
}

/** What was said so far being read into vectors: the words, and a bar once the total is known. */
export function EmbeddingHint({ done, total, text, source }: { done: number; total: number; text: string; source?: 'server' }) {
  const { t } = useTranslation();
  const pct = total > 0 ? Math.floor((done / total) * 100) : 0;
  return (
    <div className="lm-hint" data-testid="search-hint" data-kind="embedding" data-source={source}>
      <span className="spinner" aria-hidden="true" />
      <div className="lm-hint-body">
        <span role="status">{text}</span>
        {total > 0 ? (
          <div
            className="progress-track lm-track"
            role="progressbar"
            aria-label={t('models.local.searchEmbeddingLabel')}
            aria-valuemin={0}
            aria-valuemax={100}
            aria-valuenow={pct}
          >
            <span className="progress-fill" style={{ width: `${pct}%` }} />
          </div>
        ) : null}
      </div>
    </div>
  );
}
