// Model servers found running on this computer (Ollama, LM Studio, …), each with a button to use it:
// in Settings → Models and in the first-run setup.
import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import type { DetectedServer } from '../../shared/api.js';
import { sameServer } from '../lib/providerDefaults.js';
import { useProviders } from '../stores/providers.js';
import { Icon } from './Icon.js';

export function DetectedServers({ onUse, exclude = [] }: { onUse: (server: DetectedServer) => void; exclude?: string[] }) {
  const { t } = useTranslation();
  const detected = useProviders((s) => s.detected);
  const detecting = useProviders((s) => s.detecting);

  useEffect(() => {
    if (useProviders.getState().detected === null) void useProviders.getState().detect();
  }, []);

  const fresh = (detected ?? []).filter((d) => !exclude.some((url) => sameServer(url, d.baseUrl)));
  if (detecting && !detected) {
    // With models already set up, a search in progress is not worth a line of its own.
    if (exclude.length) return null;
    return (
      <p className="detect-status" role="status">
        <span className="spinner" aria-hidden="true" /> {t('models.detecting')}
      </p>
    );
  }
  if (!fresh.length) {
    if (exclude.length) return null;
    return (
      <p className="detect-status" role="status">
        {t('models.noneDetected')}{' '}
        <button type="button" className="link-button" onClick={() => void useProviders.getState().detect()} disabled={detecting}>
          {t('models.lookAgain')}
        </button>
      </p>
    );
  }
  return (
    <div className="detected" data-testid="detected-servers">
      <h3 className="subhead">{t('models.detectedTitle')}</h3>
      <ul className="detected-list">
        {fresh.map((d) => (
          <li key={d.baseUrl} className="detected-item">
            <Icon name="server" size={20} className="detected-icon" />
            <div className="detected-text">
              <p>{t('models.detectedBody', { name: d.name, url: d.baseUrl, count: d.models.length })}</p>
              {d.models.length ? (
                <p className="detected-models mono">
                  {d.models.slice(0, 4).join(' · ')}
                  {d.models.length > 4 ? ' …' : ''}
                </p>
              ) : null}
            </div>
            <button type="button" className="button primary small" data-testid="use-detected" onClick={() => onUse(d)}>
              {t('models.useDetected', { name: d.name })}
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}
