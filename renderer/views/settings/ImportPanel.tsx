// Settings → Data → Import from another app: choose a file (or drop it on the panel), read what it
// holds before anything is stored ("412 conversations, 38,120 messages, from Apr 2023 to Nov 2026"),
// then import with a progress bar and Cancel, and see how it ended. A character card is shown as the
// companion's six blocks to read and edit; saving them is the person's call, with an undo. Anima's
// own archive is shown part by part (conversations, memories, diary, graph, …) with what of each is
// here already; it is stored in one piece or not at all.
import { useEffect, useId, useRef, useState, type DragEvent, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import {
  IMPORT_ARCHIVE_PARTS,
  MAX_IMPORT_BYTES,
  SELF_BLOCK_KEYS,
  type ImportArchivePreview,
  type ImportPreview,
  type ImportProgress,
  type SelfBlockKey,
} from '../../../shared/api.js';
import { ErrorNote } from '../../components/ErrorNote.js';
import { Icon, type IconName } from '../../components/Icon.js';
import { currentLocale } from '../../i18n/index.js';
import { useApp } from '../../stores/app.js';
import { monthSpan, percentOf, previewReach, useImport } from '../../stores/import.js';

const ACCEPT = '.zip,.json,.jsonl,.png,application/zip,application/json,image/png';

function useCounts() {
  const { t } = useTranslation();
  const locale = currentLocale();
  const num = (n: number) => new Intl.NumberFormat(locale).format(n);
  return {
    num,
    conversations: (count: number) => t('imports.conversations', { count, n: num(count) }),
    messages: (count: number) => t('imports.messages', { count, n: num(count) }),
    versions: (count: number) => t('imports.versions', { count, n: num(count) }),
    newMessages: (count: number) => t('imports.newMessages', { count, n: num(count) }),
  };
}

function DropZone() {
  const { t } = useTranslation();
  const choose = useImport((s) => s.choose);
  const input = useRef<HTMLInputElement>(null);
  const [over, setOver] = useState(false);
  const helpId = useId();
  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setOver(false);
    const file = e.dataTransfer.files[0];
    if (file) void choose(file);
  };
  return (
    <div
      className={over ? 'import-drop over' : 'import-drop'}
      data-testid="import-drop"
      onDragOver={(e) => {
        if (!e.dataTransfer.types.includes('Files')) return;
        e.preventDefault();
        e.dataTransfer.dropEffect = 'copy';
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={onDrop}
    >
      <Icon name="unarchive" size={26} className="import-drop-icon" />
      <p className="import-drop-title">{t('imports.dropHere')}</p>
      <button type="button" className="button" aria-describedby={helpId} onClick={() => input.current?.click()} data-testid="import-choose">
        {t('imports.choose')}
      </button>
      <p className="help" id={helpId}>
        {t('imports.accepted', { size: `${MAX_IMPORT_BYTES / 1024 / 1024} MB` })}
      </p>
      <input
        ref={input}
        type="file"
        accept={ACCEPT}
        hidden
        aria-label={t('imports.dropLabel')}
        data-testid="import-file"
        onChange={(e) => {
          const file = e.target.files?.[0];
          e.target.value = '';
          if (file) void choose(file);
        }}
      />
    </div>
  );
}

function Bar({ percent, label, indeterminate = false }: { percent: number; label: string; indeterminate?: boolean }) {
  return (
    <div
      className={indeterminate ? 'progress-track data-track import-indeterminate' : 'progress-track data-track'}
      role="progressbar"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={indeterminate ? undefined : percent}
    >
      <span className="progress-fill" style={{ width: indeterminate ? '30%' : `${percent}%` }} />
    </div>
  );
}

/** A card's first line: what it is about (an icon and a file or a name) and a badge (a format or the file). */
function CardHead({ icon, title, badge }: { icon: IconName; title: string; badge: string }) {
  return (
    <div className="import-card-head">
      <Icon name={icon} size={18} />
      <strong className="import-file">{title}</strong>
      <span className="badge">{badge}</span>
    </div>
  );
}

/** A preview's buttons: its own action first (none when there is nothing to do), then Cancel, which drops the preview. */
function ReviewActions({ children }: { children: ReactNode }) {
  const { t } = useTranslation();
  const { reset, busy } = useImport();
  return (
    <div className="data-actions">
      {children}
      <button type="button" className="button" onClick={reset} disabled={busy} data-testid="import-cancel-preview">
        {t('imports.cancel')}
      </button>
    </div>
  );
}

function Summary({ preview }: { preview: ImportPreview }) {
  const { t } = useTranslation();
  const c = useCounts();
  const { apply, busy } = useImport();
  const span = monthSpan(preview, currentLocale());
  const parts = [c.conversations(preview.conversations), c.messages(preview.messages)];
  if (preview.versions) parts.push(c.versions(preview.versions));
  if (span) parts.push(span.same ? t('imports.spanSame', { month: span.from }) : t('imports.span', span));
  const sep = currentLocale().startsWith('zh') ? '，' : ', ';
  const archive = preview.archive ?? null;
  // Conversations here already that the file carries further are not skipped: they get the new messages (or another version of the last one).
  const { grown, newVersions, skipped, nothingNew: noneNew } = previewReach(preview);
  const nothingNew = archive ? Object.values(archive.parts).every((p) => p.already >= p.total) : noneNew;
  return (
    <div className="data-card" data-testid="import-summary">
      <CardHead icon={archive ? 'unarchive' : 'chat'} title={preview.file} badge={t(`imports.formats.${preview.format}`)} />
      <p className="import-summary-line" data-testid="import-summary-line">
        {parts.join(sep)}
      </p>
      {archive ? <ArchiveParts archive={archive} /> : null}
      {!archive && (grown > 0 || newVersions > 0) ? (
        <p className="import-note" data-testid="import-grown">
          {[
            grown ? t('imports.grown', { count: grown, n: c.num(grown), messages: c.newMessages(preview.newMessages ?? 0) }) : '',
            newVersions ? t('imports.newVersions', { count: newVersions, n: c.num(newVersions) }) : '',
          ]
            .filter(Boolean)
            .join(' ')}
        </p>
      ) : null}
      {!archive && skipped > 0 && !nothingNew ? (
        <p className="import-note" data-testid="import-already">
          {t('imports.already', { count: skipped, n: c.num(skipped) })}
          {preview.inTrash ? ` ${t('imports.inTrash', { count: preview.inTrash, n: c.num(preview.inTrash) })}` : ''}
        </p>
      ) : null}
      {nothingNew ? (
        <p className="import-note" data-testid="import-already">
          {archive ? t('imports.archive.allAlready') : t('imports.allAlready')}
        </p>
      ) : (
        <p className="help">{archive ? t('imports.archive.onePiece') : t('imports.history')}</p>
      )}
      {preview.undated ? <p className="help">{t('imports.undated', { count: preview.undated, n: c.num(preview.undated) })}</p> : null}
      {preview.warnings.length ? (
        <details className="import-warnings">
          <summary>{t('imports.notes', { count: preview.warnings.length, n: c.num(preview.warnings.length) })}</summary>
          <ul>
            {preview.warnings.map((w, i) => (
              <li key={i} lang="en">
                {w}
              </li>
            ))}
          </ul>
        </details>
      ) : null}
      <ReviewActions>
        {nothingNew ? null : (
          <button type="button" className="button primary" onClick={() => void apply()} disabled={busy} data-testid="import-start">
            {t('imports.start')}
          </button>
        )}
      </ReviewActions>
    </div>
  );
}

/** An archive's parts: how many rows each holds, and how many of them are here already. */
function ArchiveParts({ archive }: { archive: ImportArchivePreview }) {
  const { t } = useTranslation();
  const c = useCounts();
  const date = new Intl.DateTimeFormat(currentLocale(), { dateStyle: 'medium' }).format(new Date(archive.exportedAt || Date.now()));
  return (
    <>
      <p className="help" data-testid="import-archive-written">
        {t('imports.archive.written', { version: archive.appVersion, date })}
      </p>
      <table className="import-archive-parts" data-testid="import-archive-parts">
        <thead>
          <tr>
            <th scope="col">{t('imports.archive.part')}</th>
            <th scope="col">{t('imports.archive.total')}</th>
            <th scope="col">{t('imports.archive.here')}</th>
          </tr>
        </thead>
        <tbody>
          {IMPORT_ARCHIVE_PARTS.filter((part) => archive.parts[part].total > 0).map((part) => (
            <tr key={part} data-part={part}>
              <th scope="row">{t(`imports.archive.parts.${part}`)}</th>
              <td>{c.num(archive.parts[part].total)}</td>
              <td className={archive.parts[part].already ? undefined : 'import-archive-none'}>
                {archive.parts[part].already ? c.num(archive.parts[part].already) : '—'}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

function CardReview({ preview }: { preview: ImportPreview }) {
  const { t } = useTranslation();
  const card = preview.card!;
  const { saveCard, busy } = useImport();
  const [blocks, setBlocks] = useState<Partial<Record<SelfBlockKey, string>>>(card.blocks);
  const [error, setError] = useState<unknown>(null);
  const save = async () => {
    setError(null);
    try {
      await saveCard(blocks);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <div className="data-card" data-testid="import-card-review">
      <CardHead icon="person" title={t('imports.card.title', { name: card.name })} badge={preview.file} />
      <p className="help">{t('imports.card.intro')}</p>
      {SELF_BLOCK_KEYS.map((key) => {
        const id = `import-block-${key}`;
        const has = typeof card.blocks[key] === 'string';
        return (
          <div className="import-block" key={key} data-testid={id}>
            <label className="field-label" htmlFor={id}>
              {t(`companion.blocks.${key}.name`)}
            </label>
            {has ? (
              <textarea
                id={id}
                className="self-textarea import-textarea"
                value={blocks[key] ?? ''}
                maxLength={20_000}
                onChange={(e) => setBlocks({ ...blocks, [key]: e.target.value })}
              />
            ) : (
              <p className="help">{t('imports.card.notInCard')}</p>
            )}
          </div>
        );
      })}
      {card.greeting ? (
        <details className="import-warnings">
          <summary>{t('imports.card.greeting')}</summary>
          <p className="import-greeting">{card.greeting}</p>
        </details>
      ) : null}
      {error ? <ErrorNote error={error} compact /> : null}
      <ReviewActions>
        <button type="button" className="button primary" onClick={() => void save()} disabled={busy} data-testid="import-card-save">
          {t('imports.card.save')}
        </button>
      </ReviewActions>
    </div>
  );
}

function Progress({ progress }: { progress: ImportProgress }) {
  const { t } = useTranslation();
  const c = useCounts();
  const { cancel, reset, busy } = useImport();
  const setView = useApp((s) => s.setView);
  const [stopping, setStopping] = useState(false);
  const running = progress.state === 'running';
  useEffect(() => {
    if (!running) setStopping(false);
  }, [running]);
  const pct = progress.state === 'done' ? 100 : percentOf(progress.done, progress.total);
  const stored = { conversations: c.conversations(progress.imported), messages: c.messages(progress.messages) };
  return (
    <div className="data-card" data-testid="import-progress" data-state={progress.state}>
      <CardHead
        icon={progress.state === 'done' ? 'check' : progress.state === 'running' ? 'unarchive' : 'alert'}
        title={progress.file}
        badge={t(`imports.formats.${progress.format}`)}
      />
      {running ? (
        <>
          <div className="data-progress-top">
            <span>{t('imports.progress', { done: c.num(progress.done), total: c.conversations(progress.total) })}</span>
            <span className="help">{c.messages(progress.messages)}</span>
          </div>
          <Bar percent={pct} label={t('imports.progressLabel', { file: progress.file })} />
          <p className="help" aria-live="polite">
            {stopping ? t('imports.stopping') : progress.format === 'anima' ? t('imports.archive.onePiece') : t('imports.history')}
          </p>
          <div className="data-actions">
            <button
              type="button"
              className="button"
              disabled={busy || stopping}
              data-testid="import-cancel"
              onClick={() => {
                setStopping(true);
                void cancel();
              }}
            >
              {t('imports.cancel')}
            </button>
          </div>
        </>
      ) : (
        <>
          <Bar percent={pct} label={t('imports.progressLabel', { file: progress.file })} />
          <p className="import-result" role="status" data-testid="import-result">
            {progress.format === 'anima'
              ? t(`imports.archive.${progress.state === 'done' ? 'done' : progress.state === 'cancelled' ? 'cancelled' : 'failed'}`, stored)
              : progress.state === 'done'
                ? progress.grown && !progress.imported
                  ? t('imports.doneGrown', { count: progress.grown, n: c.num(progress.grown), messages: c.newMessages(progress.added ?? 0) })
                  : t('imports.done', stored)
                : progress.state === 'cancelled'
                  ? t('imports.cancelled', stored)
                  : t('imports.failed', { title: progress.failedAt ?? '', conversations: stored.conversations })}
            {progress.grown && progress.imported
              ? ` ${t('imports.doneGrown', { count: progress.grown, n: c.num(progress.grown), messages: c.newMessages(progress.added ?? 0) })}`
              : ''}
            {progress.already ? ` ${t('imports.skipped', { count: progress.already, n: c.num(progress.already) })}` : ''}
          </p>
          {progress.notes?.length ? (
            <details className="import-warnings" open data-testid="import-result-notes">
              <summary>{t('imports.keptOurs', { count: progress.notes.length, n: c.num(progress.notes.length) })}</summary>
              <ul>
                {progress.notes.map((note, i) => (
                  <li key={i} lang="en">
                    {note}
                  </li>
                ))}
              </ul>
            </details>
          ) : null}
          {progress.state === 'failed' && progress.error ? <ErrorNote error={progress.error} compact /> : null}
          <div className="data-actions">
            {progress.imported > 0 || progress.grown ? (
              <button type="button" className="button primary" onClick={() => setView('chat')} data-testid="import-open-chats">
                {t('imports.openChats')}
              </button>
            ) : null}
            <button type="button" className="button" onClick={reset} data-testid="import-another">
              {t('imports.another')}
            </button>
          </div>
        </>
      )}
    </div>
  );
}

export function ImportPanel() {
  const { t } = useTranslation();
  const step = useImport((s) => s.step);
  const { resume, reset, cancel, undoCard, busy } = useImport();
  const titleId = useId();
  useEffect(() => {
    void resume();
  }, [resume]);
  return (
    <section className="data-panel import-panel" aria-labelledby={titleId} data-testid="import-panel">
      <h3 className="subhead" id={titleId}>
        {t('imports.title')}
      </h3>
      <p className="help data-intro">{t('imports.intro')}</p>
      {step.kind === 'idle' ? <DropZone /> : null}
      {step.kind === 'failed' ? (
        <>
          <ErrorNote error={step.error}>
            <span className="help">{t('imports.failedFile', { file: step.file })}</span>
          </ErrorNote>
          <DropZone />
        </>
      ) : null}
      {step.kind === 'uploading' || step.kind === 'reading' ? (
        <div className="data-card" data-testid="import-uploading">
          <div className="data-progress-top">
            <span>{step.kind === 'uploading' ? t('imports.sending', { file: step.file }) : t('imports.reading', { file: step.file })}</span>
          </div>
          <Bar
            percent={step.kind === 'uploading' ? percentOf(step.sent, step.size) : 100}
            indeterminate={step.kind === 'reading'}
            label={t('imports.sendingLabel', { file: step.file })}
          />
          <div className="data-actions">
            <button type="button" className="button" onClick={() => void cancel()}>
              {t('imports.cancel')}
            </button>
          </div>
        </div>
      ) : null}
      {step.kind === 'preview' ? step.preview.card ? <CardReview preview={step.preview} /> : <Summary preview={step.preview} /> : null}
      {step.kind === 'importing' ? <Progress progress={step.progress} /> : null}
      {step.kind === 'cardSaved' ? (
        <div className="data-card" data-testid="import-card-saved">
          <p className="import-result" role="status">
            {step.undone ? t('imports.card.undone') : t('imports.card.saved', { name: step.name })}
          </p>
          <div className="data-actions">
            {step.undone ? null : (
              <button type="button" className="button" onClick={() => void undoCard()} disabled={busy} data-testid="import-card-undo">
                {t('imports.card.undo')}
              </button>
            )}
            <button type="button" className="button" onClick={reset} data-testid="import-another">
              {t('imports.another')}
            </button>
          </div>
        </div>
      ) : null}
    </section>
  );
}
