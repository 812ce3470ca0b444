import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { SELF_BLOCK_KEYS, type SelfBlock, type SelfBlockKey } from '../../../shared/api.js';
import { AVATAR_COLORS } from '../../../shared/api/settings.js';
import { MAX_NAME_LENGTH } from '../../../shared/companion-name.js';
import { useTimeFormat } from '../../app/hooks.js';
import { CompanionAvatar, squarePicture, useCompanionName } from '../../components/CompanionAvatar.js';
import { RetryNote } from '../../components/LoadPanel.js';
import { useAutosize, useEditor } from '../../components/useEditor.js';
import { reportError, useApp } from '../../stores/app.js';
import { useSelf } from '../../stores/self.js';
import { SwitchField } from './SwitchField.js';

/** The companion's name and face: a name field, a picture or the initial on a colour, and the good-morning switch. */
function ProfileCard() {
  const { t } = useTranslation();
  const name = useCompanionName();
  const profile = useSelf((s) => s.profile);
  const greeting = useApp((s) => s.settings?.companion?.greeting ?? true);
  const [draft, setDraft] = useState(name);
  const { saving, run } = useEditor({ report: reportError });
  const file = useRef<HTMLInputElement>(null);

  // A rename elsewhere (the Identity block saved) shows here unless the person is typing.
  const lastSeen = useRef(name);
  useEffect(() => {
    if (lastSeen.current !== name) {
      setDraft((current) => (current === lastSeen.current ? name : current));
      lastSeen.current = name;
    }
  }, [name]);

  const dirty = draft.trim() !== '' && draft.trim() !== name;
  const rename = () =>
    run(async () => {
      const p = await useSelf.getState().rename(draft);
      setDraft(p.name);
      useApp.getState().toast({ tone: 'info', text: t('companion.profile.renamed', { name: p.name }) });
    });

  const pick = async (f: File | undefined) => {
    if (!f) return;
    let image: string;
    try {
      image = await squarePicture(f);
    } catch {
      useApp.getState().toast({ tone: 'error', text: t('companion.profile.pictureUnreadable') });
      return;
    }
    try {
      await useSelf.getState().setAvatar({ image });
      useApp.getState().toast({ tone: 'info', text: t('companion.profile.pictureSaved') });
    } catch (err) {
      reportError(err);
    }
  };

  return (
    <section className="companion-profile" data-testid="companion-profile" aria-labelledby="companion-profile-title">
      <CompanionAvatar size={72} />
      <div className="companion-profile-fields">
        <h3 className="subhead" id="companion-profile-title">
          {t('companion.profile.title')}
        </h3>
        <div className="field">
          <label htmlFor="companion-name">{t('companion.profile.nameLabel')}</label>
          <div className="companion-name-row">
            <input
              id="companion-name"
              className="input"
              data-testid="companion-name"
              value={draft}
              maxLength={MAX_NAME_LENGTH}
              aria-describedby="companion-name-help"
              onChange={(e) => setDraft(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === 'Enter' && dirty && !e.nativeEvent.isComposing) void rename();
              }}
            />
            <button type="button" className="button primary small" data-testid="companion-rename" disabled={!dirty || saving} onClick={() => void rename()}>
              {saving ? t('common.saving') : t('companion.profile.rename')}
            </button>
          </div>
          <p className="help" id="companion-name-help">
            {t('companion.profile.nameHelp')}
          </p>
        </div>
        <div className="field">
          <span className="field-label">{t('companion.profile.pictureLabel')}</span>
          <div className="companion-avatar-actions">
            <input
              ref={file}
              type="file"
              accept="image/png,image/jpeg,image/webp"
              hidden
              data-testid="companion-picture-file"
              onChange={(e) => {
                void pick(e.target.files?.[0]);
                e.target.value = '';
              }}
            />
            <button type="button" className="button small" data-testid="companion-picture" onClick={() => file.current?.click()}>
              {t('companion.profile.choosePicture')}
            </button>
            {profile?.avatar ? (
              <button
                type="button"
                className="button ghost small"
                data-testid="companion-use-initial"
                onClick={() => void useSelf.getState().setAvatar({ image: null }).catch(reportError)}
              >
                {t('companion.profile.useInitial')}
              </button>
            ) : null}
          </div>
        </div>
        {profile?.avatar ? null : (
          <div className="field" role="group" aria-labelledby="companion-color-label">
            <span className="field-label" id="companion-color-label">
              {t('companion.profile.colorLabel')}
            </span>
            <div className="avatar-colors">
              {AVATAR_COLORS.map((c) => (
                <button
                  key={c}
                  type="button"
                  className={`avatar-swatch avatar-${c}`}
                  data-testid={`avatar-color-${c}`}
                  aria-label={t(`companion.profile.colors.${c}`)}
                  title={t(`companion.profile.colors.${c}`)}
                  aria-pressed={(profile?.color ?? 'teal') === c}
                  onClick={() => void useSelf.getState().setAvatar({ color: c }).catch(reportError)}
                />
              ))}
            </div>
          </div>
        )}
        <SwitchField
          id="companion-greeting"
          testId="companion-greeting"
          checked={greeting}
          onChange={(on) =>
            void useApp
              .getState()
              .updateSettings({ companion: { greeting: on } })
              .catch(reportError)
          }
          label={t('companion.greeting.label')}
          help={t('companion.greeting.help')}
        />
      </div>
    </section>
  );
}

function BlockEditor({ blockKey, block }: { blockKey: SelfBlockKey; block: SelfBlock }) {
  const { t } = useTranslation();
  const { when, full } = useTimeFormat();
  const [text, setText] = useState(block.content);
  const { saving, run, keys } = useEditor({ report: reportError });
  const [confirmReset, setConfirmReset] = useState(false);
  const ref = useRef<HTMLTextAreaElement>(null);
  const dirty = text !== block.content;
  const name = t(`companion.blocks.${blockKey}.name`);

  // A save or reset elsewhere replaces the text unless the person is in the middle of editing.
  const lastSeen = useRef(block.content);
  useEffect(() => {
    if (lastSeen.current !== block.content) {
      setText((current) => (current === lastSeen.current ? block.content : current));
      lastSeen.current = block.content;
    }
  }, [block.content]);

  useAutosize(ref, text, 420);

  const save = () =>
    run(async () => {
      await useSelf.getState().update(blockKey, text);
      useApp.getState().toast({ tone: 'info', text: t('companion.savedToast', { name }) });
    });

  const reset = async () => {
    setConfirmReset(false);
    try {
      const b = await useSelf.getState().reset(blockKey);
      setText(b.content);
    } catch (err) {
      reportError(err);
    }
  };

  const id = `self-${blockKey}`;
  return (
    <section className="self-block" data-testid={`self-block-${blockKey}`} aria-labelledby={`${id}-name`}>
      <div className="self-block-head">
        <div>
          <h3 className="subhead" id={`${id}-name`}>
            {name}
          </h3>
          <p className="help" id={`${id}-desc`}>
            {t(`companion.blocks.${blockKey}.description`)}
          </p>
        </div>
        <span className={dirty ? 'badge badge-accent' : 'badge'} title={block.isDefault ? undefined : full(block.updatedAt)}>
          {dirty ? t('companion.unsaved') : block.isDefault ? t('companion.isDefault') : t('companion.edited', { when: when(block.updatedAt) })}
        </span>
      </div>
      <textarea
        ref={ref}
        id={id}
        className="input self-textarea"
        data-testid={`self-input-${blockKey}`}
        aria-labelledby={`${id}-name`}
        aria-describedby={`${id}-desc`}
        value={text}
        maxLength={20_000}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={keys({ save, key: 's', claim: dirty })}
      />
      {confirmReset ? (
        <div className="confirm" role="alertdialog" aria-label={t('companion.resetConfirm', { name })}>
          <p>{t('companion.resetConfirm', { name })}</p>
          <div className="confirm-actions">
            <button type="button" className="button ghost small" onClick={() => setConfirmReset(false)} autoFocus>
              {t('common.cancel')}
            </button>
            <button type="button" className="button danger small" data-testid={`self-reset-confirm-${blockKey}`} onClick={() => void reset()}>
              {t('companion.reset')}
            </button>
          </div>
        </div>
      ) : (
        <div className="self-block-actions">
          <button
            type="button"
            className="button ghost small"
            data-testid={`self-reset-${blockKey}`}
            disabled={block.isDefault && !dirty}
            onClick={() => setConfirmReset(true)}
          >
            {t('companion.reset')}
          </button>
          {dirty ? (
            <button type="button" className="button ghost small" onClick={() => setText(block.content)}>
              {t('common.cancel')}
            </button>
          ) : null}
          <button type="button" className="button primary small" data-testid={`self-save-${blockKey}`} disabled={!dirty || saving} onClick={() => void save()}>
            {saving ? t('common.saving') : t('companion.save')}
          </button>
        </div>
      )}
    </section>
  );
}

export function CompanionSection() {
  const { t } = useTranslation();
  const blocks = useSelf((s) => s.blocks);
  const loaded = useSelf((s) => s.loaded);
  const error = useSelf((s) => s.error);

  useEffect(() => {
    void useSelf.getState().load();
  }, []);

  return (
    <div className="settings-section" data-testid="settings-section-companion">
      <ProfileCard />
      <p className="section-intro">{t('companion.intro')}</p>
      {error ? <RetryNote error={error} onRetry={() => void useSelf.getState().load()} /> : null}
      {!loaded ? <p className="empty-line">{t('common.loading')}</p> : null}
      {SELF_BLOCK_KEYS.map((key) => {
        const block = blocks[key];
        return block ? <BlockEditor key={key} blockKey={key} block={block} /> : null;
      })}
    </div>
  );
}
