import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { DetectedServer, ProviderConfig } from '../../../shared/api.js';
import { createAndOpen } from '../../app/actions.js';
import { DetectedServers } from '../../components/DetectedServers.js';
import { ProviderForm, type ProviderDraft } from '../../components/ProviderForm.js';
import { Toasts } from '../../components/Toasts.js';
import { reportError, useApp } from '../../stores/app.js';
import { useSelf } from '../../stores/self.js';

const TOTAL = 3;

function Steps({ step }: { step: number }) {
  const { t } = useTranslation();
  return (
    <div className="onb-steps">
      <span className="onb-step-text">{t('onboarding.step', { n: step, total: TOTAL })}</span>
      <span className="onb-dots" aria-hidden="true">
        {Array.from({ length: TOTAL }, (_, i) => (
          <span key={i} className={i + 1 <= step ? 'onb-dot on' : 'onb-dot'} />
        ))}
      </span>
    </div>
  );
}

function Welcome({ onNext }: { onNext: () => void }) {
  const { t } = useTranslation();
  return (
    <>
      <div className="onb-mark" aria-hidden="true" />
      <h1 className="onb-title" tabIndex={-1}>
        {t('onboarding.welcomeTitle')}
      </h1>
      <p className="onb-lead">{t('onboarding.welcomeBody')}</p>
      <ul className="onb-points">
        <li>{t('onboarding.welcomeLocal')}</li>
        <li>{t('onboarding.welcomeVisible')}</li>
      </ul>
      <div className="onb-actions">
        <button type="button" className="button primary large" data-testid="onboarding-start" onClick={onNext} autoFocus>
          {t('onboarding.start')}
        </button>
      </div>
    </>
  );
}

function Connect({
  onNext,
  onBack,
  saved,
  onSavedProvider,
}: {
  onNext: () => void;
  onBack: () => void;
  /** Coming back to this step edits what was saved rather than adding a second connection. */
  saved: ProviderConfig | null;
  onSavedProvider: (p: ProviderConfig) => void;
}) {
  const { t } = useTranslation();
  const [picked, setPicked] = useState<{ prefill: Partial<ProviderDraft>; seq: number } | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);

  const use = (d: DetectedServer) => setPicked({ prefill: { kind: d.kind, name: d.name, baseUrl: d.baseUrl, model: d.models[0] ?? '' }, seq: Date.now() });

  const onSaved = async (provider: ProviderConfig) => {
    onSavedProvider(provider);
    try {
      await useApp.getState().updateSettings({ chatProviderId: provider.id });
    } catch (err) {
      reportError(err);
    }
    onNext();
  };

  return (
    <>
      <h1 className="onb-title" ref={heading} tabIndex={-1}>
        {t('onboarding.connectTitle')}
      </h1>
      <p className="onb-lead">{t('onboarding.connectBody')}</p>
      <DetectedServers onUse={use} />
      <h2 className="subhead onb-manual">{t('onboarding.manualTitle')}</h2>
      <ProviderForm
        key={picked?.seq ?? 0}
        formKey="onboarding"
        initial={saved}
        prefill={picked?.prefill}
        autoTest={Boolean(picked)}
        requireTest
        saveLabel={t('onboarding.saveAndContinue')}
        onSaved={(p) => void onSaved(p)}
        extraActions={
          <>
            <button type="button" className="button ghost" onClick={onBack}>
              {t('common.back')}
            </button>
            <button type="button" className="button ghost" data-testid="onboarding-skip" title={t('onboarding.skipHint')} onClick={onNext}>
              {t('common.skip')}
            </button>
          </>
        }
      />
    </>
  );
}

function Meet({ onBack }: { onBack: () => void }) {
  const { t } = useTranslation();
  const identity = useSelf((s) => s.blocks.identity);
  const [text, setText] = useState<string | null>(null);
  const [finishing, setFinishing] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    heading.current?.focus();
    if (!useSelf.getState().loaded) void useSelf.getState().load();
  }, []);

  const value = text ?? identity?.content ?? '';

  const finish = async () => {
    setFinishing(true);
    try {
      if (text !== null && identity && text !== identity.content) await useSelf.getState().update('identity', text);
      await createAndOpen();
      useApp.getState().setView('chat');
      // The zone this window runs in is the person's own; the host may only have guessed (e.g. UTC).
      const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
      const zonePatch = zone && useApp.getState().settings?.timeZone !== zone ? { timeZone: zone } : {};
      // Last: this swaps onboarding for the app, which then lands in the new conversation.
      await useApp.getState().updateSettings({ onboarded: true, ...zonePatch });
    } catch (err) {
      setFinishing(false);
      reportError(err);
    }
  };

  return (
    <>
      <h1 className="onb-title" ref={heading} tabIndex={-1}>
        {t('onboarding.meetTitle')}
      </h1>
      <p className="onb-lead">{t('onboarding.meetBody')}</p>
      <div className="field">
        <label htmlFor="onb-identity">{t('onboarding.identityLabel')}</label>
        <textarea
          id="onb-identity"
          className="input self-textarea onb-identity"
          data-testid="onboarding-identity"
          value={value}
          rows={7}
          maxLength={20_000}
          disabled={!identity && !useSelf.getState().error}
          onChange={(e) => setText(e.target.value)}
        />
      </div>
      <div className="onb-actions">
        <button type="button" className="button ghost" onClick={onBack}>
          {t('common.back')}
        </button>
        <button type="button" className="button primary large" data-testid="onboarding-finish" disabled={finishing} onClick={() => void finish()}>
          {finishing ? t('onboarding.finishing') : t('onboarding.finish')}
        </button>
      </div>
    </>
  );
}

export function Onboarding() {
  const { t } = useTranslation();
  const [step, setStep] = useState(1);
  const [saved, setSaved] = useState<ProviderConfig | null>(null);
  return (
    <main className="onboarding" aria-label={t('onboarding.label')} data-testid="onboarding" data-step={step}>
      <div className={`onb-card onb-step-${step}`}>
        <Steps step={step} />
        {step === 1 ? (
          <Welcome onNext={() => setStep(2)} />
        ) : step === 2 ? (
          <Connect onNext={() => setStep(3)} onBack={() => setStep(1)} saved={saved} onSavedProvider={setSaved} />
        ) : (
          <Meet onBack={() => setStep(2)} />
        )}
      </div>
      <Toasts />
    </main>
  );
}
