import { useId } from 'react';

/**
 * A folder of the person's, typed in as a path: the box, Save (which hands on the trimmed path, or
 * null for an empty box) and, once a folder is in use, the button that stops using it (the box is
 * emptied too). What saving and stopping do is the panel's.
 */
export function FolderForm({
  className,
  testId,
  words,
  folder,
  onFolderChange,
  busy,
  canSave = true,
  inUse,
  onSave,
  onStop,
}: {
  className: string;
  /** `<testId>-input`, `<testId>-save`. */
  testId: string;
  words: { label: string; placeholder: string; save: string; stop: string };
  folder: string;
  onFolderChange: (folder: string) => void;
  busy: boolean;
  canSave?: boolean;
  inUse: boolean;
  onSave: (folder: string | null) => void;
  onStop: () => void;
}) {
  const id = useId();
  return (
    <form
      className={className}
      onSubmit={(e) => {
        e.preventDefault();
        onSave(folder.trim() || null);
      }}
    >
      <label className="visually-hidden" htmlFor={id}>
        {words.label}
      </label>
      <input
        id={id}
        className="input mono"
        value={folder}
        placeholder={words.placeholder}
        onChange={(e) => onFolderChange(e.target.value)}
        spellCheck={false}
        data-testid={`${testId}-input`}
      />
      <button type="submit" className="button" disabled={busy || !canSave} data-testid={`${testId}-save`}>
        {words.save}
      </button>
      {inUse ? (
        <button
          type="button"
          className="button"
          disabled={busy}
          onClick={() => {
            onFolderChange('');
            onStop();
          }}
        >
          {words.stop}
        </button>
      ) : null}
    </form>
  );
}
