import { useEffect, useId, useMemo, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { ApiError, PROVIDER_KINDS, type ApiInput, type ProviderConfig, type ProviderKind } from '../../shared/api.js';
import { GENERATION_LIMITS, generationProblems, type GenerationProblem, type GenerationSettings } from '../../shared/api/providers.js';
import { ErrorNote } from './ErrorNote.js';
import { Icon } from './Icon.js';
import { useApp } from '../stores/app.js';
import { useProviders } from '../stores/providers.js';
import { DEFAULT_BASE_URL, PRESETS, looksLocal, suggestName, type PresetKey } from '../lib/providerDefaults.js';

export interface ProviderDraft {
  kind: ProviderKind;
  name: string;
  baseUrl: string;
  model: string;
  contextTokens: string;
  /** The generation settings as typed; '' is unset (the server's default). Stop sequences one per line. */
  temperature: string;
  topP: string;
  maxTokens: string;
  stop: string;
}

/** What the server uses when a connection says nothing of its context. */
const DEFAULT_CONTEXT = 8192;

const decimal = (v: string) => (v.trim() === '' ? null : Number(v.trim().replace(',', '.')));
const whole = (v: string) => (v.trim() === '' ? null : Number(v.replace(/[\s,_]/g, '')));

/** The on-device model reads the temperature and the longest reply only: top-p and stop sequences are not offered for it. */
const samplingOnly = (kind: ProviderKind) => kind === 'local';

/** The draft's generation settings, as the API takes them. */
function generationOf(d: ProviderDraft): GenerationSettings {
  const local = samplingOnly(d.kind);
  return {
    temperature: decimal(d.temperature),
    topP: local ? null : decimal(d.topP),
    maxTokens: whole(d.maxTokens),
    stop: local ? [] : d.stop.split('\n').filter((line) => line !== ''),
  };
}

const contextOf = (d: ProviderDraft) => {
  const tokens = Number.parseInt(d.contextTokens.replace(/[\s,_]/g, ''), 10);
  return Number.isFinite(tokens) && tokens > 0 ? tokens : DEFAULT_CONTEXT;
};

interface Props {
  /** Keys the connection-test state in the store. */
  formKey: string;
  initial?: ProviderConfig | null;
  prefill?: Partial<ProviderDraft>;
  /** Run the test as soon as the form appears (a detected server picked with one click). */
  autoTest?: boolean;
  /** Onboarding: saving only after a test that passed with the values on screen. */
  requireTest?: boolean;
  saveLabel: string;
  onSaved: (provider: ProviderConfig) => void;
  onCancel?: () => void;
  extraActions?: ReactNode;
}

function draftFrom(initial: ProviderConfig | null | undefined, prefill: Partial<ProviderDraft> | undefined): ProviderDraft {
  const kind = prefill?.kind ?? initial?.kind ?? 'openai-compatible';
  return {
    kind,
    name: prefill?.name ?? initial?.name ?? '',
    baseUrl: prefill?.baseUrl ?? initial?.baseUrl ?? DEFAULT_BASE_URL[kind],
    model: prefill?.model ?? initial?.model ?? '',
    contextTokens: prefill?.contextTokens ?? (initial ? String(initial.contextTokens) : ''),
    temperature: initial?.generation.temperature?.toString() ?? '',
    topP: initial?.generation.topP?.toString() ?? '',
    maxTokens: initial?.generation.maxTokens?.toString() ?? '',
    stop: initial?.generation.stop.join('\n') ?? '',
  };
}

export function ProviderForm({ formKey, initial, prefill, autoTest, requireTest, saveLabel, onSaved, onCancel, extraActions }: Props) {
  const { t, i18n } = useTranslation();
  const uid = useId();
  const secretStorage = useApp((s) => s.info?.secretStorage ?? 'os-encrypted');
  const [draft, setDraft] = useState<ProviderDraft>(() => draftFrom(initial, prefill));
  const [apiKey, setApiKey] = useState('');
  const [removeKey, setRemoveKey] = useState(false);
  const [saving, setSaving] = useState(false);
  const [saveError, setSaveError] = useState<unknown>(null);
  const [testedFor, setTestedFor] = useState<string | null>(null);
  const test = useProviders((s) => s.tests[formKey]);
  const hasSavedKey = Boolean(initial?.hasApiKey) && !removeKey;
  const kindLabel = t(`models.kinds.${draft.kind}`);

  const set = <K extends keyof ProviderDraft>(key: K, value: ProviderDraft[K]) => setDraft((d) => ({ ...d, [key]: value }));

  const signature = JSON.stringify([draft.kind, draft.baseUrl.trim(), draft.model.trim(), apiKey, removeKey]);
  const testPassed = Boolean(test?.result?.ok) && testedFor === signature;
  const models = test?.result?.models ?? [];

  const changeKind = (kind: ProviderKind) => {
    setDraft((d) => {
      // Only replace an address the person did not type themselves.
      const untouched = !d.baseUrl.trim() || Object.values(DEFAULT_BASE_URL).includes(d.baseUrl) || Object.values(PRESETS).some((p) => p.baseUrl === d.baseUrl);
      return { ...d, kind, baseUrl: untouched ? DEFAULT_BASE_URL[kind] : d.baseUrl };
    });
  };

  const applyPreset = (key: PresetKey) => {
    const preset = PRESETS[key];
    setDraft((d) => ({
      ...d,
      kind: preset.kind,
      baseUrl: preset.baseUrl,
      name: !d.name.trim() || Object.values(PRESETS).some((p) => p.name === d.name) ? preset.name : d.name,
    }));
  };

  const testInput = (): ApiInput<'providers.test'> => ({
    ...(initial ? { id: initial.id } : {}),
    kind: draft.kind,
    name: draft.name.trim() || undefined,
    baseUrl: draft.baseUrl.trim(),
    model: draft.model.trim(),
    ...(apiKey ? { apiKey } : removeKey ? { apiKey: '' } : {}),
  });

  const runTest = async () => {
    const sig = signature;
    const result = await useProviders.getState().test(formKey, testInput());
    setTestedFor(sig);
    // An empty model with a list to choose from: take the first so one click is enough.
    if (result?.ok && result.models.length && !draft.model.trim()) {
      const first = result.models[0]!;
      setDraft((d) => ({ ...d, model: first }));
      setTestedFor(JSON.stringify([draft.kind, draft.baseUrl.trim(), first, apiKey, removeKey]));
    }
  };

  const ran = useRef(false);
  useEffect(() => {
    if (autoTest && !ran.current) {
      ran.current = true;
      void runTest();
    }
    // Only on mount: later tests are the person's own.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  useEffect(() => () => useProviders.getState().clearTest(formKey), [formKey]);

  const generation = generationOf(draft);
  const generationIssues = generationProblems(draft.kind, generation, contextOf(draft));
  const generationSet = [generation.temperature, generation.topP, generation.maxTokens].filter((v) => v !== null).length + (generation.stop.length ? 1 : 0);
  const issueFor = (field: GenerationProblem['field']) => generationIssues.find((p) => p.field === field);
  const [showIssues, setShowIssues] = useState(false);

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    if (saving || (requireTest && !testPassed)) return;
    // Bad generation settings are said beside their fields; nothing is sent.
    if (generationIssues.length) {
      setShowIssues(true);
      return;
    }
    setSaving(true);
    setSaveError(null);
    const tokens = Number.parseInt(draft.contextTokens.replace(/[\s,_]/g, ''), 10);
    const input: ApiInput<'providers.save'> = {
      ...(initial ? { id: initial.id } : {}),
      kind: draft.kind,
      name: draft.name.trim() || suggestName(draft.kind, draft.baseUrl, kindLabel),
      baseUrl: draft.baseUrl.trim(),
      model: draft.model.trim(),
      ...(Number.isFinite(tokens) && tokens > 0 ? { contextTokens: tokens } : {}),
      ...(apiKey ? { apiKey } : removeKey ? { apiKey: '' } : {}),
      generation,
    };
    try {
      const saved = await useProviders.getState().save(input);
      setSaving(false);
      onSaved(saved);
    } catch (err) {
      setSaving(false);
      setSaveError(err);
    }
  };

  const badField = saveError instanceof ApiError && saveError.code === 'invalid_input' ? saveError.field : undefined;
  const ids = useMemo(
    () => ({
      kind: `${uid}-kind`,
      name: `${uid}-name`,
      url: `${uid}-url`,
      key: `${uid}-key`,
      keyHelp: `${uid}-key-help`,
      model: `${uid}-model`,
      picker: `${uid}-picker`,
      ctx: `${uid}-ctx`,
      ctxHelp: `${uid}-ctx-help`,
      temperature: `${uid}-temperature`,
      topP: `${uid}-top-p`,
      maxTokens: `${uid}-max-tokens`,
      stop: `${uid}-stop`,
      kindHelp: `${uid}-kind-help`,
    }),
    [uid],
  );
  const needsUrl = draft.kind !== 'local';
  const keyOptional = (draft.kind === 'openai-compatible' || draft.kind === 'ollama') && looksLocal(draft.baseUrl);

  return (
    <form className="provider-form" onSubmit={onSubmit} noValidate data-testid="provider-form">
      <div className="field">
        <label htmlFor={ids.kind}>{t('models.fields.kind')}</label>
        <select
          id={ids.kind}
          className="input"
          data-testid="provider-kind"
          value={draft.kind}
          aria-describedby={ids.kindHelp}
          onChange={(e) => changeKind(e.target.value as ProviderKind)}
        >
          {PROVIDER_KINDS.map((k) => (
            <option key={k} value={k}>
              {t(`models.kinds.${k}`)}
            </option>
          ))}
        </select>
        <p className="help" id={ids.kindHelp}>
          {t(`models.kindHelp.${draft.kind}`)}
        </p>
      </div>

      {draft.kind === 'openai-compatible' || draft.kind === 'ollama' ? (
        <div className="field">
          <span className="field-label" id={`${uid}-presets`}>
            {t('models.presetsLabel')}
          </span>
          <div className="chip-row" role="group" aria-labelledby={`${uid}-presets`}>
            {(Object.keys(PRESETS) as PresetKey[]).map((key) => (
              <button
                type="button"
                key={key}
                className="toggle-chip"
                data-testid={`provider-preset-${key}`}
                aria-pressed={draft.baseUrl === PRESETS[key].baseUrl}
                onClick={() => applyPreset(key)}
              >
                {t(`models.presets.${key}`)}
              </button>
            ))}
          </div>
        </div>
      ) : null}

      <div className="field">
        <label htmlFor={ids.name}>{t('models.fields.name')}</label>
        <input
          id={ids.name}
          className="input"
          data-testid="provider-name"
          value={draft.name}
          maxLength={80}
          placeholder={suggestName(draft.kind, draft.baseUrl, kindLabel) || t('models.fields.namePlaceholder')}
          aria-invalid={badField === 'name' || undefined}
          onChange={(e) => set('name', e.target.value)}
        />
      </div>

      {needsUrl ? (
        <div className="field">
          <label htmlFor={ids.url}>{t('models.fields.baseUrl')}</label>
          <input
            id={ids.url}
            className="input mono"
            data-testid="provider-base-url"
            type="url"
            inputMode="url"
            spellCheck={false}
            autoComplete="off"
            value={draft.baseUrl}
            maxLength={500}
            placeholder={DEFAULT_BASE_URL[draft.kind]}
            aria-invalid={badField === 'baseUrl' || undefined}
            onChange={(e) => set('baseUrl', e.target.value)}
          />
        </div>
      ) : null}

      {needsUrl ? (
        <div className="field">
          <label htmlFor={ids.key}>
            {keyOptional ? t('models.fields.apiKeyOptional') : t('models.fields.apiKey')}
            {hasSavedKey ? (
              <span className="badge badge-ok" data-testid="provider-key-saved">
                <Icon name="check" size={12} /> {t('models.keySaved')}
              </span>
            ) : null}
          </label>
          <input
            id={ids.key}
            className="input mono"
            data-testid="provider-api-key"
            type="password"
            autoComplete="off"
            spellCheck={false}
            value={apiKey}
            maxLength={500}
            placeholder={hasSavedKey ? t('models.fields.apiKeySavedPlaceholder') : ''}
            aria-describedby={ids.keyHelp}
            aria-invalid={badField === 'apiKey' || undefined}
            onChange={(e) => {
              setApiKey(e.target.value);
              if (e.target.value) setRemoveKey(false);
            }}
          />
          <p className="help" id={ids.keyHelp}>
            {secretStorage === 'owner-only-file' ? t('models.fields.keyStorageFile') : t('models.fields.keyStorageOs')}
          </p>
          {initial?.hasApiKey && !apiKey ? (
            removeKey ? (
              <p className="help">
                {t('models.fields.keyWillBeRemoved')}{' '}
                <button type="button" className="link-button" onClick={() => setRemoveKey(false)}>
                  {t('models.fields.keepKey')}
                </button>
              </p>
            ) : (
              <button type="button" className="link-button" data-testid="provider-remove-key" onClick={() => setRemoveKey(true)}>
                {t('models.fields.removeKey')}
              </button>
            )
          ) : null}
        </div>
      ) : null}

      <div className="field">
        <label htmlFor={ids.model}>{t('models.fields.model')}</label>
        <div className="model-row">
          <input
            id={ids.model}
            className="input mono"
            data-testid="provider-model"
            value={draft.model}
            maxLength={200}
            spellCheck={false}
            autoComplete="off"
            placeholder={t('models.fields.modelPlaceholder')}
            aria-invalid={badField === 'model' || undefined}
            onChange={(e) => set('model', e.target.value)}
          />
          {models.length ? (
            <select
              className="input model-picker"
              data-testid="provider-model-picker"
              aria-label={t('models.fields.modelPicker')}
              value={models.includes(draft.model) ? draft.model : ''}
              onChange={(e) => e.target.value && set('model', e.target.value)}
            >
              <option value="">{t('models.fields.modelPickerChoose', { count: models.length })}</option>
              {models.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
          ) : null}
        </div>
      </div>

      <div className="field">
        <label htmlFor={ids.ctx}>{t('models.fields.contextTokens')}</label>
        <input
          id={ids.ctx}
          className="input narrow"
          data-testid="provider-context"
          inputMode="numeric"
          value={draft.contextTokens}
          placeholder={draft.kind === 'anthropic' ? '200000' : '8192'}
          aria-describedby={ids.ctxHelp}
          aria-invalid={badField === 'contextTokens' || undefined}
          onChange={(e) => set('contextTokens', e.target.value.replace(/[^\d]/g, ''))}
        />
        <p className="help" id={ids.ctxHelp}>
          {t('models.fields.contextHelp')}
        </p>
      </div>

      <GenerationFields
        draft={draft}
        set={set}
        ids={ids}
        kind={draft.kind}
        contextTokens={contextOf(draft)}
        setCount={generationSet}
        issueFor={showIssues ? issueFor : () => undefined}
        badField={badField}
      />

      <div className="test-row">
        <button type="button" className="button" data-testid="provider-test" disabled={test?.running} onClick={() => void runTest()}>
          {test?.running ? <span className="spinner" aria-hidden="true" /> : <Icon name="server" size={16} />}
          {test?.running ? t('models.testing') : t('models.test')}
        </button>
        <div className="test-result" aria-live="polite" data-testid="provider-test-result" data-ok={test?.result ? String(test.result.ok) : undefined}>
          {test && !test.running && test.result?.ok ? (
            <p className="test-ok">
              <Icon name="check" size={16} />
              <span>
                {t('models.testOk', { ms: Math.round(test.result.latencyMs) })}{' '}
                {test.result.models.length ? t('models.testModels', { count: test.result.models.length }) : null}
                {test.result.server?.contextTokens
                  ? ` ${t('models.testWindow', { tokens: test.result.server.contextTokens.toLocaleString(i18n.language) })}`
                  : null}
              </span>
            </p>
          ) : null}
        </div>
      </div>
      {test && !test.running && (test.error || (test.result && !test.result.ok)) ? (
        <ErrorNote compact detailVisible error={test.error ?? { code: test.result?.code ?? 'internal', message: test.result?.message ?? '' }} />
      ) : null}

      {saveError ? <ErrorNote compact error={saveError} /> : null}

      <div className="form-actions">
        {requireTest && !testPassed ? <p className="help form-actions-hint">{t('models.testNeeded')}</p> : null}
        <div className="form-actions-buttons">
          {extraActions}
          {onCancel ? (
            <button type="button" className="button ghost" onClick={onCancel}>
              {t('common.cancel')}
            </button>
          ) : null}
          <button type="submit" className="button primary" data-testid="provider-save" disabled={saving || (requireTest && !testPassed)}>
            {saving ? t('common.saving') : saveLabel}
          </button>
        </div>
      </div>
    </form>
  );
}

type GenerationKey = 'temperature' | 'topP' | 'maxTokens' | 'stop';

function problemWords(t: (key: string, options?: Record<string, unknown>) => string, p: GenerationProblem): string {
  switch (p.field) {
    case 'temperature':
    case 'topP':
    case 'maxTokens':
      return t(`models.generation.problems.${p.field}`, { min: p.min, max: p.max });
    case 'stop':
      return p.problem === 'count'
        ? t('models.generation.problems.stopCount', { max: p.max })
        : p.problem === 'empty'
          ? t('models.generation.problems.stopEmpty')
          : t('models.generation.problems.stopLength', { max: p.max });
  }
}

/** Temperature, top-p, the longest reply and stop sequences: folded away until one is set. */
function GenerationFields({
  draft,
  set,
  ids,
  kind,
  contextTokens,
  setCount,
  issueFor,
  badField,
}: {
  draft: ProviderDraft;
  set: <K extends keyof ProviderDraft>(key: K, value: ProviderDraft[K]) => void;
  ids: Record<'temperature' | 'topP' | 'maxTokens' | 'stop', string>;
  kind: ProviderKind;
  contextTokens: number;
  setCount: number;
  issueFor: (field: GenerationProblem['field']) => GenerationProblem | undefined;
  badField: string | undefined;
}) {
  const { t, i18n } = useTranslation();
  const [open, setOpen] = useState(setCount > 0);
  const L = GENERATION_LIMITS;
  const tMax = kind === 'anthropic' ? L.temperature.anthropicMax : L.temperature.max;
  const anyIssue = (['temperature', 'topP', 'maxTokens', 'stop'] as const).some((f) => issueFor(f));
  const field = (key: GenerationKey, label: string, help: string, input: ReactNode) => {
    const issue = issueFor(key);
    return (
      <div className="field">
        <label htmlFor={ids[key]}>{label}</label>
        {input}
        <p className="help" id={`${ids[key]}-help`}>
          {help}
        </p>
        {issue ? (
          <p className="field-error" role="alert" data-testid={`generation-${key}-problem`}>
            {problemWords(t, issue)}
          </p>
        ) : null}
      </div>
    );
  };
  const invalid = (key: GenerationKey) => Boolean(issueFor(key)) || badField === `generation.${key}` || undefined;
  /** A number's box, empty for the server's default; a whole number's takes digits only. */
  const numberInput = (key: 'temperature' | 'topP' | 'maxTokens', testId: string, inputMode: 'decimal' | 'numeric') => (
    <input
      id={ids[key]}
      className="input narrow"
      data-testid={testId}
      inputMode={inputMode}
      value={draft[key]}
      placeholder={t('models.generation.serverDefault')}
      aria-describedby={`${ids[key]}-help`}
      aria-invalid={invalid(key)}
      onChange={(e) => set(key, inputMode === 'numeric' ? e.target.value.replace(/[^\d]/g, '') : e.target.value)}
    />
  );
  return (
    <details
      className="generation-settings"
      data-testid="generation-settings"
      open={open || anyIssue}
      onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}
    >
      <summary>
        {t('models.generation.title')}
        {setCount ? <span className="badge">{t('models.generation.changed', { count: setCount })}</span> : null}
      </summary>
      <p className="help generation-intro">{t('models.generation.intro')}</p>
      <div className="generation-grid">
        {field(
          'temperature',
          t('models.generation.temperature'),
          t('models.generation.temperatureHelp', { min: L.temperature.min, max: tMax }),
          numberInput('temperature', 'generation-temperature', 'decimal'),
        )}
        {samplingOnly(kind)
          ? null
          : field('topP', t('models.generation.topP'), t('models.generation.topPHelp'), numberInput('topP', 'generation-top-p', 'decimal'))}
        {field(
          'maxTokens',
          t('models.generation.maxTokens'),
          t('models.generation.maxTokensHelp', { max: Math.floor(contextTokens * L.maxTokens.contextShare).toLocaleString(i18n.language) }),
          numberInput('maxTokens', 'generation-max-tokens', 'numeric'),
        )}
      </div>
      {samplingOnly(kind)
        ? null
        : field(
            'stop',
            t('models.generation.stop'),
            t('models.generation.stopHelp'),
            <textarea
              id={ids.stop}
              className="input mono"
              data-testid="generation-stop"
              rows={2}
              spellCheck={false}
              value={draft.stop}
              placeholder={t('models.generation.serverDefault')}
              aria-describedby={`${ids.stop}-help`}
              aria-invalid={invalid('stop')}
              onChange={(e) => set('stop', e.target.value)}
            />,
          )}
      <button
        type="button"
        className="link-button"
        data-testid="generation-reset"
        disabled={setCount === 0}
        onClick={() => {
          set('temperature', '');
          set('topP', '');
          set('maxTokens', '');
          set('stop', '');
        }}
      >
        {t('models.generation.reset')}
      </button>
    </details>
  );
}
