// Settings → Data → Storage: where the companion's data is kept — this data folder, or a PostgreSQL
// server — with a Test that shows what a server offers (version, pg_trgm, pgvector, what the database
// holds) before it is chosen. The choice applies when Anima starts again; the URL's password is kept
// with the API keys, and never shown again.
import { useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { StorageProbe, StorageStatus } from '../../../shared/api.js';
import { api } from '../../api/index.js';
import { ErrorNote } from '../../components/ErrorNote.js';
import { SwitchField } from './SwitchField.js';
import '../../styles/settings/storage.css';

type Tone = 'ok' | 'warn' | 'bad';

function checks(probe: StorageProbe, t: (key: string, o?: Record<string, unknown>) => string): { tone: Tone; text: string }[] {
  return [
    { tone: probe.supported ? 'ok' : 'bad', text: t(probe.supported ? 'storage.check.version' : 'storage.check.versionOld', { version: probe.version }) },
    { tone: probe.trgm === 'missing' ? 'bad' : 'ok', text: t(`storage.check.trgm.${probe.trgm}`) },
    { tone: probe.vector === 'missing' ? 'warn' : 'ok', text: t(`storage.check.vector.${probe.vector}`) },
    { tone: probe.contents === 'other' ? 'bad' : 'ok', text: t(`storage.check.contents.${probe.contents}`) },
  ];
}

export function StoragePanel({ dataDir }: { dataDir: string }) {
  const { t } = useTranslation();
  const titleId = useId();
  const switchId = useId();
  const urlId = useId();
  const [status, setStatus] = useState<StorageStatus | null>(null);
  const [useServer, setUseServer] = useState(false);
  const [url, setUrl] = useState('');
  const [probe, setProbe] = useState<StorageProbe | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const show = (next: StorageStatus) => {
    setStatus(next);
    setUseServer(next.chosen !== null);
    setUrl(next.chosen?.url ?? '');
  };
  useEffect(() => {
    api().call('storage.status', {}).then(show, setError);
  }, []);

  const run = async (fn: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const test = () =>
    run(async () => {
      setProbe(null);
      setProbe(await api().call('storage.test', { url: url.trim() }));
    });
  const choose = (next: string | null) =>
    run(async () => {
      show(await api().call('storage.choose', { url: next }));
      setProbe(null);
    });

  const trimmed = url.trim();
  const migrateCommand = `anima migrate-store --from "${dataDir}" --to ${trimmed || 'postgres://…'}`;
  return (
    <section className="data-panel storage-panel" aria-labelledby={titleId} data-testid="storage-panel">
      <h3 className="subhead" id={titleId}>
        {t('storage.title')}
      </h3>
      {status ? (
        <p className="help data-intro" data-testid="storage-now">
          {status.engine === 'postgres' ? t('storage.nowServer') : t('storage.nowFolder')} <span className="mono storage-where">{status.where}</span>
        </p>
      ) : null}
      {status?.fixedByCommandLine ? <p className="help">{t('storage.fixed')}</p> : null}
      <SwitchField
        id={switchId}
        testId="storage-use-server"
        checked={useServer}
        onChange={(on) => {
          setUseServer(on);
          setProbe(null);
          if (!on && status?.chosen) void choose(null);
        }}
        label={t('storage.useServer')}
        help={t('storage.useServerHelp')}
      />
      {useServer ? (
        <>
          <form
            className="storage-url-row"
            onSubmit={(e) => {
              e.preventDefault();
              void test();
            }}
          >
            <label className="visually-hidden" htmlFor={urlId}>
              {t('storage.urlLabel')}
            </label>
            <input
              id={urlId}
              className="input mono"
              value={url}
              placeholder="postgres://anima@localhost:5432/anima"
              onChange={(e) => {
                setUrl(e.target.value);
                setProbe(null);
              }}
              spellCheck={false}
              autoComplete="off"
              data-testid="storage-url"
            />
            <button type="submit" className="button" disabled={busy || !trimmed} data-testid="storage-test">
              {t('storage.test')}
            </button>
            <button
              type="button"
              className="button primary"
              disabled={busy || !trimmed || trimmed === status?.chosen?.url}
              onClick={() => void choose(trimmed)}
              data-testid="storage-choose"
            >
              {t('storage.choose')}
            </button>
          </form>
          <p className="help">{status?.chosen?.hasPassword && trimmed === status.chosen.url ? t('storage.passwordKept') : t('storage.passwordHelp')}</p>
        </>
      ) : null}
      {probe ? (
        <div className="data-card" data-testid="storage-probe">
          <ul className="storage-checks">
            {checks(probe, t).map((c) => (
              <li key={c.text} className={`storage-check-${c.tone}`}>
                <span aria-hidden="true">{c.tone === 'ok' ? '✓' : c.tone === 'warn' ? '!' : '✗'}</span>
                <span>{c.text}</span>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {status?.restartNeeded ? (
        <div className="data-card" role="status" data-testid="storage-restart">
          <p>{status.chosen ? t('storage.restartServer') : t('storage.restartFolder')}</p>
          {status.chosen ? (
            <>
              <p className="help">{t('storage.moveHelp')}</p>
              <code className="mono storage-where">{migrateCommand}</code>
            </>
          ) : null}
        </div>
      ) : null}
      {error ? <ErrorNote compact error={error} /> : null}
    </section>
  );
}
