import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { DetectedServer, ProviderConfig } from '../../../shared/api.js';
import { DetectedServers } from '../../components/DetectedServers.js';
import { Icon } from '../../components/Icon.js';
import { ProviderForm, type ProviderDraft } from '../../components/ProviderForm.js';
import { reportError, useApp } from '../../stores/app.js';
import { useProviders } from '../../stores/providers.js';
import { LocalModels } from './LocalModels.js';
import { ProviderAbilities } from './ProviderAbilities.js';

type Editing = { mode: 'new'; prefill?: Partial<ProviderDraft>; autoTest?: boolean; seq: number } | { mode: 'edit'; id: string } | null;

function ProviderCard({
  provider: p,
  forChat,
  forBackground,
  onEdit,
}: {
  provider: ProviderConfig;
  forChat: boolean;
  forBackground: boolean;
  onEdit: () => void;
}) {
  const { t, i18n } = useTranslation();
  const [confirming, setConfirming] = useState(false);
  const [switching, setSwitching] = useState(false);
  // The server gives less than the setting: the conversation is fitted into the server's window.
  const serverWindow = p.server?.contextTokens && p.server.contextTokens < p.contextTokens ? p.server.contextTokens : null;
  // An OpenAI-compatible connection whose server turned out to be Ollama: its own API can be told the context.
  const ollamaBehindV1 = p.kind === 'openai-compatible' && p.server?.software === 'ollama';
  const switchToOllama = async () => {
    setSwitching(true);
    try {
      const base = p.baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
      const saved = await useProviders
        .getState()
        .save({ id: p.id, kind: 'ollama', name: p.name, baseUrl: base, model: p.model, contextTokens: p.contextTokens });
      useApp.getState().toast({ tone: 'info', text: t('models.ollamaSwitched', { name: saved.name }) });
    } catch (err) {
      reportError(err);
    } finally {
      setSwitching(false);
    }
  };
  const remove = async () => {
    try {
      await useProviders.getState().remove(p.id);
      useApp.getState().toast({ tone: 'info', text: t('models.deleted', { name: p.name }) });
      // The host clears a role that pointed at the removed connection.
      void useApp
        .getState()
        .reloadSettings()
        .catch(() => {});
    } catch (err) {
      reportError(err);
    }
  };
  return (
    <li className="provider-card" data-testid="provider-item" data-id={p.id}>
      <div className="provider-card-main">
        <div className="provider-card-title">
          <span className="provider-name">{p.name}</span>
          {forChat ? <span className="badge badge-accent">{t('models.usedForChat')}</span> : null}
          {forBackground ? <span className="badge">{t('models.usedForBackground')}</span> : null}
        </div>
        <p className="provider-meta">
          {t(`models.kinds.${p.kind}`)}
          {p.model ? (
            <>
              {' · '}
              <span className="mono">{p.model}</span>
            </>
          ) : null}
          {p.hasApiKey ? (
            <>
              {' · '}
              {t('models.fields.apiKey')} {t('models.keySaved')}
            </>
          ) : null}
        </p>
        {p.baseUrl ? <p className="provider-url mono">{p.baseUrl}</p> : null}
        {serverWindow ? (
          <p className="provider-note" data-testid="provider-window-note">
            {t('models.serverWindow', { tokens: serverWindow.toLocaleString(i18n.language) })}
          </p>
        ) : null}
        {p.abilities ? <ProviderAbilities abilities={p.abilities} /> : null}
        {ollamaBehindV1 ? (
          <div className="provider-offer" data-testid="provider-ollama-offer">
            <p>{t('models.ollamaOffer')}</p>
            <button type="button" className="button small" data-testid="provider-ollama-switch" disabled={switching} onClick={() => void switchToOllama()}>
              {t('models.ollamaSwitch')}
            </button>
          </div>
        ) : null}
      </div>
      {confirming ? (
        <div className="confirm" role="alertdialog" aria-label={t('models.deleteConfirm', { name: p.name })}>
          <p>{t('models.deleteConfirm', { name: p.name })}</p>
          <div className="confirm-actions">
            <button type="button" className="button ghost small" onClick={() => setConfirming(false)} autoFocus>
              {t('common.cancel')}
            </button>
            <button type="button" className="button danger small" data-testid="provider-delete-confirm" onClick={() => void remove()}>
              {t('common.delete')}
            </button>
          </div>
        </div>
      ) : (
        <div className="provider-card-actions">
          <button type="button" className="button small" data-testid="provider-edit" onClick={onEdit}>
            {t('common.edit')}
          </button>
          <button type="button" className="button ghost small" data-testid="provider-delete" onClick={() => setConfirming(true)}>
            {t('common.delete')}
          </button>
        </div>
      )}
    </li>
  );
}

/** A choice per connection: its name, and its model when it names one. */
function ProviderOptions({ items }: { items: ProviderConfig[] }) {
  return (
    <>
      {items.map((p) => (
        <option key={p.id} value={p.id}>
          {p.name}
          {p.model ? ` — ${p.model}` : ''}
        </option>
      ))}
    </>
  );
}

export function ModelsSection() {
  const { t } = useTranslation();
  const items = useProviders((s) => s.items);
  const loaded = useProviders((s) => s.loaded);
  const settings = useApp((s) => s.settings);
  const [editing, setEditing] = useState<Editing>(null);

  useEffect(() => {
    void useProviders.getState().refresh().catch(reportError);
  }, []);

  const chatId = settings?.chatProviderId ?? null;
  const backgroundId = settings?.backgroundProviderId ?? null;
  // What follows from the choices: memories only from naps and nights; nights read from plain text.
  const chatProvider = items.find((p) => p.id === chatId);
  const backgroundProvider = items.find((p) => p.id === (backgroundId ?? chatId));
  const chatNoTools = chatProvider?.abilities?.tools === 'no' ? chatProvider : null;
  const backgroundNoStructured = backgroundProvider?.abilities?.structured === 'no' ? backgroundProvider : null;

  const onSaved = async (saved: ProviderConfig) => {
    setEditing(null);
    useApp.getState().toast({ tone: 'info', text: t('models.savedToast', { name: saved.name }) });
    if (!useApp.getState().settings?.chatProviderId) {
      await useApp.getState().updateSettings({ chatProviderId: saved.id }).catch(reportError);
    }
  };

  const useDetected = (d: DetectedServer) =>
    setEditing({ mode: 'new', prefill: { kind: d.kind, name: d.name, baseUrl: d.baseUrl, model: d.models[0] ?? '' }, autoTest: true, seq: Date.now() });

  const editingProvider = editing?.mode === 'edit' ? items.find((p) => p.id === editing.id) : null;

  return (
    <div className="settings-section" data-testid="settings-section-models">
      <p className="section-intro">{t('models.intro')}</p>

      {loaded && !items.length && !editing ? <p className="empty-line">{t('models.empty')}</p> : null}

      {!editing ? <DetectedServers onUse={useDetected} exclude={items.length ? items.map((p) => p.baseUrl) : []} /> : null}

      {items.length ? (
        <ul className="provider-list">
          {items.map((p) =>
            editing?.mode === 'edit' && editing.id === p.id && editingProvider ? (
              <li key={p.id} className="provider-card editing">
                <h3 className="subhead">{t('models.editTitle', { name: p.name })}</h3>
                <ProviderForm
                  formKey={p.id}
                  initial={editingProvider}
                  saveLabel={t('models.save')}
                  onSaved={(s) => void onSaved(s)}
                  onCancel={() => setEditing(null)}
                />
              </li>
            ) : (
              <ProviderCard
                key={p.id}
                provider={p}
                forChat={p.id === chatId}
                forBackground={backgroundId === p.id}
                onEdit={() => setEditing({ mode: 'edit', id: p.id })}
              />
            ),
          )}
        </ul>
      ) : null}

      {editing?.mode === 'new' ? (
        <div className="provider-card editing" key={editing.seq}>
          <h3 className="subhead">{t('models.addTitle')}</h3>
          <ProviderForm
            formKey="new"
            prefill={editing.prefill}
            autoTest={editing.autoTest}
            saveLabel={t('models.save')}
            onSaved={(s) => void onSaved(s)}
            onCancel={() => setEditing(null)}
          />
        </div>
      ) : !editing ? (
        <button type="button" className="button" data-testid="provider-add" onClick={() => setEditing({ mode: 'new', seq: Date.now() })}>
          <Icon name="plus" size={16} />
          {t('models.add')}
        </button>
      ) : null}

      {items.length ? (
        <div className="roles">
          <h3 className="subhead">{t('models.rolesTitle')}</h3>
          <div className="field">
            <label htmlFor="chat-provider">{t('models.chatProvider')}</label>
            <select
              id="chat-provider"
              className="input"
              data-testid="chat-provider-select"
              value={chatId ?? ''}
              onChange={(e) =>
                void useApp
                  .getState()
                  .updateSettings({ chatProviderId: e.target.value || null })
                  .catch(reportError)
              }
            >
              {!chatId ? <option value="">{t('models.noneChosen')}</option> : null}
              <ProviderOptions items={items} />
            </select>
            {chatNoTools ? (
              <p className="ability-warning" data-testid="chat-provider-warning">
                {t('models.abilities.chatNoTools', { name: chatNoTools.name })}
              </p>
            ) : null}
          </div>
          <div className="field">
            <label htmlFor="background-provider">{t('models.backgroundProvider')}</label>
            <select
              id="background-provider"
              className="input"
              data-testid="background-provider-select"
              value={backgroundId ?? ''}
              aria-describedby="background-provider-help"
              onChange={(e) =>
                void useApp
                  .getState()
                  .updateSettings({ backgroundProviderId: e.target.value || null })
                  .catch(reportError)
              }
            >
              <option value="">{t('models.sameAsChat')}</option>
              <ProviderOptions items={items} />
            </select>
            <p className="help" id="background-provider-help">
              {t('models.backgroundHelp')}
            </p>
            {backgroundNoStructured ? (
              <p className="ability-warning" data-testid="background-provider-warning">
                {t('models.abilities.backgroundNoStructured', { name: backgroundNoStructured.name })}
              </p>
            ) : null}
          </div>
        </div>
      ) : null}

      <LocalModels />
    </div>
  );
}
