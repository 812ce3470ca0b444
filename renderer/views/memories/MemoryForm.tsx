// Writing a memory (Add memory) and correcting one (Edit) are the same form: the words, their type,
// what the host refused, Save and Cancel, with Ctrl/⌘+Enter to save and Escape to cancel.
import { useId, useRef, useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { ApiError, MAX_MEMORY_CHARS, MEMORY_TYPES, type MemoryType } from '../../../shared/api.js';
import { ErrorNote } from '../../components/ErrorNote.js';
import { Icon } from '../../components/Icon.js';
import { useAutosize, useEditor } from '../../components/useEditor.js';
import { refusalText } from '../../lib/memories.js';
import { modKeyLabel } from '../../lib/platform.js';

/** A refused save in words: the host's own reason for invalid input, the usual sentence otherwise. */
function SaveError({ error }: { error: unknown }) {
  const { t } = useTranslation();
  if (error instanceof ApiError && error.code === 'invalid_input') {
    return (
      <div className="mem-refused" role="alert" data-testid="memory-refused">
        <Icon name="alert" size={16} />
        <div>
          <p className="mem-refused-title">{t('memories.edit.refused')}</p>
          <p>{refusalText(error.message)}</p>
        </div>
      </div>
    );
  }
  return <ErrorNote error={error} compact />;
}

function TypeSelect({ id, value, onChange, testId }: { id: string; value: MemoryType; onChange: (t: MemoryType) => void; testId: string }) {
  const { t } = useTranslation();
  return (
    <>
      <select
        id={id}
        className="input"
        data-testid={testId}
        value={value}
        aria-describedby={`${id}-help`}
        onChange={(e) => onChange(e.target.value as MemoryType)}
      >
        {MEMORY_TYPES.map((type) => (
          <option key={type} value={type}>
            {t(`memories.types.${type}`)}
          </option>
        ))}
      </select>
      <p className="help" id={`${id}-help`}>
        {t(`memories.typeHelp.${value}`)}
      </p>
    </>
  );
}

/** The form's state: the words and type being written, and the save. */
export function useMemoryDraft(initial: { content: string; type: MemoryType }, maxHeight?: number) {
  const [text, setText] = useState(initial.content);
  const [type, setType] = useState<MemoryType>(initial.type);
  const ref = useRef<HTMLTextAreaElement>(null);
  useAutosize(ref, text, maxHeight);
  const editor = useEditor({ refocus: ref });
  const over = text.length - MAX_MEMORY_CHARS;
  const canSave = Boolean(text.trim()) && over <= 0 && !editor.saving;
  return { ...editor, text, setText, type, setType, ref, over, canSave };
}

export type MemoryDraft = ReturnType<typeof useMemoryDraft>;

/** The fields and the buttons; `children` go between the type and the error (Add memory's pin). */
export function MemoryFields({
  draft,
  labels,
  testIds,
  placeholder,
  autoFocus = false,
  onSave,
  onCancel,
  children,
}: {
  draft: MemoryDraft;
  labels: { text: string; type: string; save: string };
  testIds: { text: string; type: string; save: string };
  placeholder?: string;
  autoFocus?: boolean;
  onSave: () => void;
  onCancel: () => void;
  children?: ReactNode;
}) {
  const { t } = useTranslation();
  const uid = useId();
  const { text, setText, type, setType, ref, over, canSave, saving, error, setError } = draft;
  return (
    <>
      <div className="field">
        <label htmlFor={`${uid}-text`}>{labels.text}</label>
        <textarea
          ref={ref}
          id={`${uid}-text`}
          className="input mem-textarea"
          data-testid={testIds.text}
          placeholder={placeholder}
          value={text}
          autoFocus={autoFocus}
          aria-invalid={Boolean(error) || over > 0 || undefined}
          onChange={(e) => {
            setText(e.target.value);
            if (error) setError(null);
          }}
        />
        {over > 0 ? <p className="help danger-text">{t('memories.edit.tooLong', { count: over })}</p> : null}
      </div>
      <div className="field">
        <label htmlFor={`${uid}-type`}>{labels.type}</label>
        <TypeSelect id={`${uid}-type`} value={type} onChange={setType} testId={testIds.type} />
      </div>
      {children}
      {error ? <SaveError error={error} /> : null}
      <div className="mem-form-actions">
        <span className="help mem-shortcut" aria-hidden="true">
          {t('memories.edit.shortcut', { key: modKeyLabel() })}
        </span>
        <button type="button" className="button ghost small" onClick={onCancel}>
          {t('common.cancel')}
        </button>
        <button type="button" className="button primary small" data-testid={testIds.save} disabled={!canSave} onClick={onSave}>
          {saving ? t('common.saving') : labels.save}
        </button>
      </div>
    </>
  );
}
