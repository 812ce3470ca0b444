// What a connection's model can do for Anima, in words, on its card in Settings → Models — and what
// follows when it cannot. The host derives the abilities (electron/providers/abilities.ts).
import { useTranslation } from 'react-i18next';
import type { Ability, ProviderAbilities as Abilities } from '../../../shared/api/providers.js';
import { Icon } from '../../components/Icon.js';

const ORDER = ['chat', 'tools', 'structured', 'embeddings', 'images'] as const;

function Mark({ value }: { value: Ability }) {
  if (value === 'yes') return <Icon name="check" size={14} />;
  if (value === 'no') return <Icon name="close" size={14} />;
  return <span aria-hidden="true">?</span>;
}

export function ProviderAbilities({ abilities }: { abilities: Abilities }) {
  const { t } = useTranslation();
  return (
    <div className="abilities" data-testid="provider-abilities">
      <p className="abilities-title">{t('models.abilities.title')}</p>
      <ul className="abilities-list">
        {ORDER.map((key) => (
          <li key={key} className="ability" data-ability={key} data-value={abilities[key]} data-testid={`ability-${key}`}>
            <span className="ability-mark">
              <Mark value={abilities[key]} />
            </span>
            <span className="ability-name">{t(`models.abilities.${key}`)}</span>
            <span className="ability-what">{t(`models.abilities.${key}What`)}</span>
            <span className="ability-state">{t(`models.abilities.${abilities[key]}`)}</span>
          </li>
        ))}
      </ul>
      {abilities.tools === 'no' ? (
        <p className="ability-warning" data-testid="ability-warning-tools">
          {t('models.abilities.toolsNo')}
        </p>
      ) : null}
      {abilities.structured === 'no' ? (
        <p className="ability-warning" data-testid="ability-warning-structured">
          {t('models.abilities.structuredNo')}
        </p>
      ) : null}
    </div>
  );
}
