// Forget, asked once when a memory has messages behind it: forget only the memory, or also hide the
// messages it came from (and the replies that cited it) from recall. They stay in their conversations;
// the forget's Undo brings both back.
import { useEffect, useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Icon } from '../../components/Icon.js';

export function ForgetConfirm({
  sourceMessages,
  busy,
  onForget,
  onCancel,
}: {
  /** How many messages the forget would hide with the memory. */
  sourceMessages: number;
  busy: boolean;
  onForget: (withSources: boolean) => void;
  onCancel: () => void;
}) {
  const { t } = useTranslation();
  const [withSources, setWithSources] = useState(false);
  const titleId = useId();
  const hintId = useId();
  const box = useRef<HTMLInputElement>(null);
  useEffect(() => box.current?.focus(), []);

  return (
    <div
      className="mem-forget-confirm"
      role="group"
      aria-labelledby={titleId}
      data-testid="memory-forget-confirm"
      onKeyDown={(e) => {
        if (e.key === 'Escape') {
          e.stopPropagation();
          onCancel();
        }
      }}
    >
      <p className="mem-forget-confirm-title" id={titleId}>
        {t('memories.forgetConfirm.title')}
      </p>
      <label className="check-row">
        <input
          ref={box}
          type="checkbox"
          data-testid="memory-forget-sources"
          aria-describedby={hintId}
          checked={withSources}
          onChange={(e) => setWithSources(e.target.checked)}
        />
        <span>{t('memories.forgetConfirm.withSources', { count: sourceMessages })}</span>
      </label>
      <p className="mem-forget-confirm-hint" id={hintId}>
        {t('memories.forgetConfirm.hint')}
      </p>
      <div className="mem-detail-actions">
        <button type="button" className="button small danger" data-testid="memory-forget-go" disabled={busy} onClick={() => onForget(withSources)}>
          <Icon name="close" size={15} />
          {t('memories.forgetConfirm.forget')}
        </button>
        <button type="button" className="button small ghost" data-testid="memory-forget-cancel" disabled={busy} onClick={onCancel}>
          {t('common.cancel')}
        </button>
      </div>
    </div>
  );
}
