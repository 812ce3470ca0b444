import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { SELF_BLOCK_KEYS, type SelfBlock, type SelfBlockKey } from '../../../shared/api.js';
import { useTimeFormat } from '../../app/hooks.js';
import { RetryNote } from '../../components/LoadPanel.js';
import { useAutosize, useEditor } from '../../components/useEditor.js';
import { reportError, useApp } from '../../stores/app.js';
import { useSelf } from '../../stores/self.js';

function BlockEditor({ blockKey, block }: { blockKey: SelfBlockKey; block: SelfBlock }) {
  const { t } = useTranslation();
  const { when, full } = useTimeFormat();
  const [text, setText] = useState(block.content);
  const { saving, run, keys } = useEditor({ report: reportError });
  const [confirmReset, setConfirmReset] = useState(false);
  const ref = useRef<HTMLTextAreaElement>(null);
  const dirty = text !== block.content;
  const name = t(`companion.blocks.${blockKey}.name`);

  // A save or reset elsewhere replaces the text unless the person is in the middle of editing.
  const lastSeen = useRef(block.content);
  useEffect(() => {
    if (lastSeen.current !== block.content) {
      setText((current) => (current === lastSeen.current ? block.content : current));
      lastSeen.current = block.content;
    }
  }, [block.content]);

  useAutosize(ref, text, 420);

  const save = () =>
    run(async () => {
      await useSelf.getState().update(blockKey, text);
      useApp.getState().toast({ tone: 'info', text: t('companion.savedToast', { name }) });
    });

  const reset = async () => {
    setConfirmReset(false);
    try {
      const b = await useSelf.getState().reset(blockKey);
      setText(b.content);
    } catch (err) {
      reportError(err);
    }
  };

  const id = `self-${blockKey}`;
  return (
    <section className="self-block" data-testid={`self-block-${blockKey}`} aria-labelledby={`${id}-name`}>
      <div className="self-block-head">
        <div>
          <h3 className="subhead" id={`${id}-name`}>
            {name}
          </h3>
          <p className="help" id={`${id}-desc`}>
            {t(`companion.blocks.${blockKey}.description`)}
          </p>
        </div>
        <span className={dirty ? 'badge badge-accent' : 'badge'} title={block.isDefault ? undefined : full(block.updatedAt)}>
          {dirty ? t('companion.unsaved') : block.isDefault ? t('companion.isDefault') : t('companion.edited', { when: when(block.updatedAt) })}
        </span>
      </div>
      <textarea
        ref={ref}
        id={id}
        className="input self-textarea"
        data-testid={`self-input-${blockKey}`}
        aria-labelledby={`${id}-name`}
        aria-describedby={`${id}-desc`}
        value={text}
        maxLength={20_000}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={keys({ save, key: 's', claim: dirty })}
      />
      {confirmReset ? (
        <div className="confirm" role="alertdialog" aria-label={t('companion.resetConfirm', { name })}>
          <p>{t('companion.resetConfirm', { name })}</p>
          <div className="confirm-actions">
            <button type="button" className="button ghost small" onClick={() => setConfirmReset(false)} autoFocus>
              {t('common.cancel')}
            </button>
            <button type="button" className="button danger small" data-testid={`self-reset-confirm-${blockKey}`} onClick={() => void reset()}>
              {t('companion.reset')}
            </button>
          </div>
        </div>
      ) : (
        <div className="self-block-actions">
          <button
            type="button"
            className="button ghost small"
            data-testid={`self-reset-${blockKey}`}
            disabled={block.isDefault && !dirty}
            onClick={() => setConfirmReset(true)}
          >
            {t('companion.reset')}
          </button>
          {dirty ? (
            <button type="button" className="button ghost small" onClick={() => setText(block.content)}>
              {t('common.cancel')}
            </button>
          ) : null}
          <button type="button" className="button primary small" data-testid={`self-save-${blockKey}`} disabled={!dirty || saving} onClick={() => void save()}>
            {saving ? t('common.saving') : t('companion.save')}
          </button>
        </div>
      )}
    </section>
  );
}

export function CompanionSection() {
  const { t } = useTranslation();
  const blocks = useSelf((s) => s.blocks);
  const loaded = useSelf((s) => s.loaded);
  const error = useSelf((s) => s.error);

  useEffect(() => {
    void useSelf.getState().load();
  }, []);

  return (
    <div className="settings-section" data-testid="settings-section-companion">
      <p className="section-intro">{t('companion.intro')}</p>
      {error ? <RetryNote error={error} onRetry={() => void useSelf.getState().load()} /> : null}
      {!loaded ? <p className="empty-line">{t('common.loading')}</p> : null}
      {SELF_BLOCK_KEYS.map((key) => {
        const block = blocks[key];
        return block ? <BlockEditor key={key} blockKey={key} block={block} /> : null;
      })}
    </div>
  );
}
