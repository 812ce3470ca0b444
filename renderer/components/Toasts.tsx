import { useTranslation } from 'react-i18next';
import { useApp } from '../stores/app.js';
import { Icon } from './Icon.js';

export function Toasts() {
  const { t } = useTranslation();
  const toasts = useApp((s) => s.toasts);
  const dismiss = useApp((s) => s.dismissToast);
  return (
    <div className="toasts" aria-live="polite" aria-relevant="additions">
      {toasts.map((toast) => (
        <div key={toast.id} className={`toast toast-${toast.tone}`} role={toast.tone === 'error' ? 'alert' : 'status'} data-testid="toast">
          <span className="toast-text">{toast.text}</span>
          {toast.action ? (
            <button
              type="button"
              className="toast-action"
              data-testid="toast-action"
              onClick={() => {
                toast.action!.run();
                dismiss(toast.id);
              }}
            >
              {toast.action.label}
            </button>
          ) : null}
          <button type="button" className="icon-button toast-close" aria-label={t('toasts.dismiss')} onClick={() => dismiss(toast.id)}>
            <Icon name="close" size={16} />
          </button>
        </div>
      ))}
    </div>
  );
}
