import { useTranslation } from 'react-i18next';
import { useFleeting } from '../app/hooks.js';
import { Icon } from './Icon.js';

/** Copies text to the clipboard and says so for a moment ("Copied", with a check). */
export function CopyButton({
  text,
  label,
  copiedLabel,
  className = 'button ghost small',
  iconSize = 15,
  wrapLabel = false,
}: {
  text: string;
  label: string;
  /** Default: the common "Copied". */
  copiedLabel?: string;
  className?: string;
  iconSize?: number;
  /** The words in a span of their own, like the other actions under a message. */
  wrapLabel?: boolean;
}) {
  const { t } = useTranslation();
  const [copied, setCopied] = useFleeting(false, 1500);
  const words = copied ? (copiedLabel ?? t('common.copied')) : label;
  return (
    <button
      type="button"
      className={className}
      onClick={() => {
        void navigator.clipboard?.writeText(text).then(
          () => setCopied(true),
          () => {},
        );
      }}
    >
      <Icon name={copied ? 'check' : 'copy'} size={iconSize} />
      {wrapLabel ? <span>{words}</span> : words}
    </button>
  );
}
