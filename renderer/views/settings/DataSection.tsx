import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Icon } from '../../components/Icon.js';
import { useApp } from '../../stores/app.js';

export function DataSection() {
  const { t } = useTranslation();
  const info = useApp((s) => s.info);
  const [copied, setCopied] = useState(false);
  if (!info) return null;
  return (
    <div className="settings-section" data-testid="settings-section-data">
      <div className="field">
        <span className="field-label">{t('data.location')}</span>
        <p className="help">{t('data.locationHelp')}</p>
        <div className="path-row">
          <Icon name="folder" size={18} />
          <code className="path" data-testid="data-dir">
            {info.dataDir}
          </code>
          <button
            type="button"
            className="button small"
            onClick={() => {
              void navigator.clipboard?.writeText(info.dataDir).then(
                () => {
                  setCopied(true);
                  setTimeout(() => setCopied(false), 1500);
                },
                () => {},
              );
            }}
          >
            <Icon name={copied ? 'check' : 'copy'} size={15} />
            {copied ? t('common.copied') : t('data.copyPath')}
          </button>
        </div>
      </div>
      <dl className="facts">
        <div>
          <dt>{t('data.mode')}</dt>
          <dd>{info.mode === 'electron' ? t('data.modeElectron') : t('data.modeBrowser')}</dd>
        </div>
        <div>
          <dt>{t('data.version')}</dt>
          <dd className="mono">{info.version}</dd>
        </div>
      </dl>
      <aside className="explainer">
        <h3 className="subhead">{t('data.backupsTitle')}</h3>
        <p>{t('data.backupsBody')}</p>
      </aside>
    </div>
  );
}
