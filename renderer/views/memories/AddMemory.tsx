import { useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { MAX_MEMORY_CHARS, type MemoryType } from '../../../shared/api.js';
import { Icon } from '../../components/Icon.js';
import { useAutosize, useEditor } from '../../components/useEditor.js';
import { modKeyLabel } from '../../lib/platform.js';
import { useMemories } from '../../stores/memories.js';
import { SaveError, TypeSelect } from './MemoryDetail.js';

/** Tell the companion something to remember, in your own words. */
export function AddMemory() {
  const { t } = useTranslation();
  const uid = useId();
  const [text, setText] = useState('');
  const [type, setType] = useState<MemoryType>('world');
  const [pinned, setPinned] = useState(false);
  const ref = useRef<HTMLTextAreaElement>(null);
  useAutosize(ref, text, 300);
  const close = useMemories((s) => s.closePanel);
  const { saving, error, setError, run, keys } = useEditor({ refocus: ref });

  const over = text.length - MAX_MEMORY_CHARS;
  const canSave = Boolean(text.trim()) && over <= 0 && !saving;

  const save = async () => {
    if (!canSave) return;
    await run(async () => {
      const result = await useMemories.getState().create({ type, content: text.trim(), ...(pinned ? { pinned: true } : {}) });
      const store = useMemories.getState();
      store.select(result.memory.id);
      store.setFlash({ memoryId: result.memory.id, key: result.outcome === 'updated' ? 'updatedInstead' : 'created', changeId: result.changeId });
    });
  };

  return (
    <div className="mem-detail mem-add" data-testid="memory-add-form" onKeyDown={keys({ save, cancel: close })}>
      <div className="mem-side-bar">
        <button type="button" className="button ghost small mem-back" onClick={close}>
          <Icon name="arrowDown" size={15} className="icon-left" />
          {t('memories.back')}
        </button>
        <h2 className="mem-side-title">{t('memories.addForm.title')}</h2>
        <button type="button" className="icon-button small" aria-label={t('memories.closePanel')} title={t('memories.closePanel')} onClick={close}>
          <Icon name="close" size={16} />
        </button>
      </div>
      <div className="mem-side-body">
        <p className="help mem-add-intro">{t('memories.addForm.intro')}</p>
        <div className="field">
          <label htmlFor={`${uid}-text`}>{t('memories.addForm.textLabel')}</label>
          <textarea
            ref={ref}
            id={`${uid}-text`}
            className="input mem-textarea"
            data-testid="memory-add-input"
            placeholder={t('memories.addForm.placeholder')}
            value={text}
            autoFocus
            aria-invalid={Boolean(error) || over > 0 || undefined}
            onChange={(e) => {
              setText(e.target.value);
              if (error) setError(null);
            }}
          />
          {over > 0 ? <p className="help danger-text">{t('memories.edit.tooLong', { count: over })}</p> : null}
        </div>
        <div className="field">
          <label htmlFor={`${uid}-type`}>{t('memories.addForm.typeLabel')}</label>
          <TypeSelect id={`${uid}-type`} value={type} onChange={setType} testId="memory-add-type" />
        </div>
        <label className="check-row">
          <input type="checkbox" data-testid="memory-add-pin" checked={pinned} onChange={(e) => setPinned(e.target.checked)} />
          <span>{t('memories.addForm.pin')}</span>
        </label>
        {error ? <SaveError error={error} /> : null}
        <div className="mem-form-actions">
          <span className="help mem-shortcut" aria-hidden="true">
            {t('memories.edit.shortcut', { key: modKeyLabel() })}
          </span>
          <button type="button" className="button ghost small" onClick={close}>
            {t('common.cancel')}
          </button>
          <button type="button" className="button primary small" data-testid="memory-add-save" disabled={!canSave} onClick={() => void save()}>
            {saving ? t('common.saving') : t('memories.addForm.save')}
          </button>
        </div>
      </div>
    </div>
  );
}
