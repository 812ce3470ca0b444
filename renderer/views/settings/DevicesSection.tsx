// Settings → Devices: phones and laptops on the local network (`anima serve --listen`). Where the
// server listens, "Pair a device" shows the one-time pairing address as a QR code, as text, with the
// certificate's fingerprint and a countdown; the paired devices are listed with their last use,
// Rename and Unpair. Unpairing is security, so it is confirmed (and says it cannot be undone) instead
// of offered back. Without a LAN listener: how to start one. In the desktop app, "Use my Anima
// server" comes first (UseServerPanel.tsx); on a paired server, only where this window is.
import { useCallback, useEffect, useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import QRCode from 'qrcode';
import { MAX_DEVICE_NAME_CHARS, type Device, type DevicesList, type PairingStart } from '../../../shared/api.js';
import { api } from '../../api/index.js';
import { useNow, useTimeFormat } from '../../app/hooks.js';
import { CopyButton } from '../../components/CopyButton.js';
import { ErrorNote } from '../../components/ErrorNote.js';
import { fingerprintRows } from '../../lib/device-name.js';
import { listeningAt } from '../../lib/lan-address.js';
import { desktopShell, useDesktop } from '../../stores/desktop.js';
import '../../styles/settings/devices.css';
import { OnServerPanelView, UseServerPanelView, useDesktopView } from './UseServerPanel.js';

export function DevicesSection() {
  const view = useDesktopView();
  const { where } = view;
  const whereFailed = useDesktop((s) => s.whereFailed);
  // The desktop window on a paired server: this section says so; the devices are the server's own.
  if (where?.kind === 'server') return <OnServerPanelView origin={where.server.origin} state={view} />;
  // In the desktop app, wait for where it is before asking a host that may be a server's.
  if (desktopShell() && !where && !whereFailed) return null;
  return (
    <div className="devices-page">
      <UseServerPanelView state={view} />
      <OwnDevices titled={where?.kind === 'local'} />
    </div>
  );
}

/** `titled`: under "Use my Anima server" (the desktop app), with a heading of its own. */
function OwnDevices({ titled }: { titled: boolean }) {
  const { t } = useTranslation();
  const [list, setList] = useState<DevicesList | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [pairing, setPairing] = useState<PairingStart | null>(null);
  const count = useRef(0);

  const load = useCallback(async () => {
    try {
      const next = await api().call('devices.list', {});
      // A device more than before: the code on screen was just used.
      if (next.devices.length > count.current) setPairing(null);
      count.current = next.devices.length;
      setList(next);
      setError(null);
    } catch (err) {
      setError(err);
    }
  }, []);

  useEffect(() => {
    void load();
    const offChanged = api().on('devices.changed', () => void load());
    const offConnect = api().onConnect((reconnected) => reconnected && void load());
    return () => {
      offChanged();
      offConnect();
    };
  }, [load]);

  const startPairing = async () => {
    setError(null);
    try {
      count.current = list?.devices.length ?? 0;
      setPairing(await api().call('devices.pairingStart', {}));
    } catch (err) {
      setError(err);
    }
  };

  if (!list) return error ? <ErrorNote error={error} /> : null;

  return (
    <div className="devices" data-testid="devices-section">
      {titled ? <h3 className="subhead">{t('useServer.ownDevicesTitle')}</h3> : null}
      <p className="help data-intro">{t('devices.intro')}</p>
      {list.listening ? (
        <>
          <p data-testid="devices-listening">{t('devices.listeningAt', { address: listeningAt(list.listening) })}</p>
          {pairing ? (
            <PairingCard pairing={pairing} onNew={() => void startPairing()} onClose={() => setPairing(null)} />
          ) : (
            <div className="data-actions">
              <button type="button" className="button primary" data-testid="devices-pair" onClick={() => void startPairing()}>
                {t('devices.pair')}
              </button>
            </div>
          )}
        </>
      ) : (
        <div className="data-card" data-testid="devices-not-listening">
          <p>{t('devices.notListening')}</p>
          <pre className="fullpage-example">anima serve --listen 0.0.0.0</pre>
          <p className="help">{t('devices.notListeningAfter')}</p>
        </div>
      )}
      {error ? <ErrorNote compact error={error} /> : null}
      <DeviceList devices={list.devices} />
    </div>
  );
}

function PairingCard({ pairing, onNew, onClose }: { pairing: PairingStart; onNew: () => void; onClose: () => void }) {
  const { t } = useTranslation();
  const [svg, setSvg] = useState<string | null>(null);
  const now = useNow(1000);
  const left = Math.max(0, Date.parse(pairing.expiresAt) - now.getTime());

  useEffect(() => {
    let live = true;
    void QRCode.toString(pairing.url, { type: 'svg', margin: 2, errorCorrectionLevel: 'M', color: { dark: '#000000', light: '#ffffff' } }).then(
      (text) => live && setSvg(text),
    );
    return () => {
      live = false;
    };
  }, [pairing.url]);

  const minutes = Math.floor(left / 60_000);
  const seconds = Math.floor((left % 60_000) / 1000);
  return (
    <div className="data-card pairing-card" data-testid="pairing-card">
      <div className="pairing-layout">
        <div className="pairing-qr">
          {svg && left > 0 ? (
            <img
              src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`}
              alt={t('devices.qrLabel')}
              data-testid="pairing-qr"
              width={220}
              height={220}
            />
          ) : (
            <div className="pairing-qr-placeholder" aria-hidden="true" />
          )}
        </div>
        <div className="pairing-text">
          <p>{t('devices.pairSteps')}</p>
          <div>
            <span className="field-label">{t('devices.address')}</span>
            <code className="pairing-code" data-testid="pairing-url">
              {pairing.url}
            </code>
          </div>
          <div>
            <span className="field-label">{t('devices.fingerprint')}</span>
            <code className="pairing-code pairing-fingerprint" data-testid="pairing-fingerprint">
              {fingerprintRows(pairing.fingerprint)}
            </code>
          </div>
          <p className="help" data-testid="pairing-countdown" aria-live="polite">
            {left > 0 ? t('devices.expiresIn', { time: `${minutes}:${String(seconds).padStart(2, '0')}` }) : t('devices.expired')}
          </p>
        </div>
      </div>
      <div className="data-actions">
        <CopyButton text={pairing.url} label={t('devices.address')} className="button small" />
        <button type="button" className="button small" onClick={onNew} data-testid="pairing-new">
          {t('devices.newCode')}
        </button>
        <button type="button" className="button ghost small" onClick={onClose} data-testid="pairing-close">
          {t('devices.close')}
        </button>
      </div>
    </div>
  );
}

function DeviceList({ devices }: { devices: Device[] }) {
  const { t } = useTranslation();
  const titleId = useId();
  return (
    <section className="data-panel" aria-labelledby={titleId}>
      <h3 className="subhead" id={titleId}>
        {t('devices.listTitle')}
      </h3>
      {devices.length === 0 ? (
        <p className="help">{t('devices.empty')}</p>
      ) : (
        <ul className="device-list" data-testid="device-list">
          {devices.map((device) => (
            <DeviceRow key={device.id} device={device} />
          ))}
        </ul>
      )}
    </section>
  );
}

function DeviceRow({ device }: { device: Device }) {
  const { t } = useTranslation();
  const { when } = useTimeFormat();
  const [mode, setMode] = useState<'view' | 'rename' | 'confirm'>('view');
  const [draft, setDraft] = useState(device.name);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const confirmId = useId();

  const run = async (work: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
      setMode('view');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const revoked = device.revokedAt !== null;
  const facts = [
    t('devices.pairedOn', { date: when(device.createdAt) }),
    revoked
      ? t('devices.revokedOn', { date: when(device.revokedAt!) })
      : device.lastUsedAt
        ? t('devices.lastUsed', { date: when(device.lastUsedAt) })
        : t('devices.neverUsed'),
  ];

  return (
    <li className="device-row" data-revoked={revoked || undefined} data-testid="device-row">
      {mode === 'rename' ? (
        <form
          className="device-rename"
          onSubmit={(e) => {
            e.preventDefault();
            if (draft.trim()) void run(() => api().call('devices.rename', { id: device.id, name: draft.trim() }));
          }}
        >
          <input
            className="input"
            aria-label={t('devices.renameLabel')}
            value={draft}
            maxLength={MAX_DEVICE_NAME_CHARS}
            onChange={(e) => setDraft(e.target.value)}
            autoFocus
            data-testid="device-rename-input"
          />
          <button type="submit" className="button primary small" disabled={busy || !draft.trim()}>
            {t('devices.save')}
          </button>
          <button type="button" className="button ghost small" onClick={() => setMode('view')}>
            {t('common.cancel')}
          </button>
        </form>
      ) : (
        <div className="device-main">
          <div className="device-text">
            <span className="device-name">{device.name}</span>
            <span className="help device-facts">{facts.join(' · ')}</span>
          </div>
          {revoked ? null : (
            <div className="data-actions">
              <button
                type="button"
                className="button small"
                onClick={() => {
                  setDraft(device.name);
                  setMode('rename');
                }}
              >
                {t('devices.rename')}
              </button>
              <button type="button" className="button small" onClick={() => setMode('confirm')} data-testid="device-revoke">
                {t('devices.revoke')}
              </button>
            </div>
          )}
        </div>
      )}
      {mode === 'confirm' ? (
        <div className="data-card" role="alertdialog" aria-describedby={confirmId}>
          <p id={confirmId}>{t('devices.revokeConfirm', { name: device.name })}</p>
          <div className="data-actions">
            <button
              type="button"
              className="button danger small"
              disabled={busy}
              autoFocus
              data-testid="device-revoke-confirm"
              onClick={() => void run(() => api().call('devices.revoke', { id: device.id }))}
            >
              {t('devices.revokeButton')}
            </button>
            <button type="button" className="button ghost small" disabled={busy} onClick={() => setMode('view')}>
              {t('common.cancel')}
            </button>
          </div>
        </div>
      ) : null}
      {error ? <ErrorNote compact error={error} /> : null}
    </li>
  );
}
