import { Fragment, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { CopyButton } from '../../components/CopyButton.js';
import { Icon } from '../../components/Icon.js';
import { useApp } from '../../stores/app.js';
import { BackupsPanel } from './BackupsPanel.js';
import { BrowserLinkPanel } from './BrowserLinkPanel.js';
import { ErasePanel } from './ErasePanel.js';
import { ExportPanel } from './ExportPanel.js';
import { ImportPanel } from './ImportPanel.js';
import { StoragePanel } from './StoragePanel.js';
import { TrashPanel } from './TrashPanel.js';
import { VaultPanel } from './VaultPanel.js';

export function DataSection() {
  const { t } = useTranslation();
  const info = useApp((s) => s.info);
  // After "Erase everything" the panels above it read the fresh folder again (their lists were of the old one).
  const [erased, setErased] = useState(0);
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
          <CopyButton text={info.dataDir} label={t('data.copyPath')} className="button small" />
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
      <StoragePanel dataDir={info.dataDir} />
      {info.mode === 'browser' ? <BrowserLinkPanel /> : null}
      <Fragment key={erased}>
        <ExportPanel />
        <ImportPanel />
        <TrashPanel />
        <BackupsPanel />
        <VaultPanel />
      </Fragment>
      <ErasePanel onErased={() => setErased((n) => n + 1)} />
    </div>
  );
}
