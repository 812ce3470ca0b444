import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Icon } from '../../components/Icon.js';
import { useMemories } from '../../stores/memories.js';
import { MemoryFields, useMemoryDraft } from './MemoryForm.js';

/** Tell the companion something to remember, in your own words. */
export function AddMemory() {
  const { t } = useTranslation();
  const draft = useMemoryDraft({ content: '', type: 'world' }, 300);
  const [pinned, setPinned] = useState(false);
  const close = useMemories((s) => s.closePanel);

  const save = async () => {
    if (!draft.canSave) return;
    await draft.run(async () => {
      const result = await useMemories.getState().create({ type: draft.type, content: draft.text.trim(), ...(pinned ? { pinned: true } : {}) });
      const store = useMemories.getState();
      store.select(result.memory.id);
      const key = result.superseded !== undefined ? 'replaced' : result.outcome === 'updated' ? 'updatedInstead' : 'created';
      store.setFlash({ memoryId: result.memory.id, key, changeId: result.changeId });
    });
  };

  return (
    <div className="mem-detail mem-add" data-testid="memory-add-form" onKeyDown={draft.keys({ save, cancel: close })}>
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
        <MemoryFields
          draft={draft}
          labels={{ text: t('memories.addForm.textLabel'), type: t('memories.addForm.typeLabel'), save: t('memories.addForm.save') }}
          testIds={{ text: 'memory-add-input', type: 'memory-add-type', save: 'memory-add-save' }}
          placeholder={t('memories.addForm.placeholder')}
          autoFocus
          onSave={() => void save()}
          onCancel={close}
        >
          <label className="check-row">
            <input type="checkbox" data-testid="memory-add-pin" checked={pinned} onChange={(e) => setPinned(e.target.checked)} />
            <span>{t('memories.addForm.pin')}</span>
          </label>
        </MemoryFields>
      </div>
    </div>
  );
}
