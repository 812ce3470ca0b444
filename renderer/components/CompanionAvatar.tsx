// The companion's face and name wherever it is shown: its picture, or the first letter of its name
// on the colour the person chose (Settings → Companion). The name is the one its identity block says.
import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { useSelf } from '../stores/self.js';
import '../styles/companion/avatar.css';

let loading: Promise<void> | null = null;

/** Loads the profile once for the whole window (every avatar and name shares it). */
function ensureProfile(): void {
  if (useSelf.getState().profile || loading) return;
  loading = useSelf
    .getState()
    .loadProfile()
    .catch(() => {})
    .finally(() => {
      loading = null;
    });
}

/** The companion's name (the app's own name until the profile is read). */
export function useCompanionName(): string {
  const { t } = useTranslation();
  const name = useSelf((s) => s.profile?.name);
  useEffect(ensureProfile, []);
  return name ?? t('chat.companion');
}

/** The first letter of a name, as a person would write it on a badge. */
export function initialOf(name: string): string {
  const first = [...name.trim()][0] ?? '?';
  return first.toLocaleUpperCase();
}

export function CompanionAvatar({ size = 28, className }: { size?: number; className?: string }) {
  const name = useCompanionName();
  const profile = useSelf((s) => s.profile);
  const color = profile?.color ?? 'teal';
  const style = { width: size, height: size, fontSize: Math.round(size * 0.46) };
  return (
    <span
      className={`companion-avatar avatar-${color}${className ? ` ${className}` : ''}`}
      style={style}
      data-testid="companion-avatar"
      data-kind={profile?.avatar ? 'image' : 'initial'}
      aria-hidden="true"
    >
      {profile?.avatar ? <img src={profile.avatar} alt="" draggable={false} /> : initialOf(name)}
    </span>
  );
}

/** Reads a picked picture and makes it a small square (256 px, its centre), so what is stored and sent stays small. */
export async function squarePicture(file: File, side = 256): Promise<string> {
  const url = await new Promise<string>((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error ?? new Error('unreadable'));
    reader.readAsDataURL(file);
  });
  const img = new Image();
  await new Promise<void>((resolve, reject) => {
    img.onload = () => resolve();
    img.onerror = () => reject(new Error('not an image'));
    img.src = url;
  });
  const crop = Math.min(img.naturalWidth, img.naturalHeight);
  const canvas = document.createElement('canvas');
  canvas.width = side;
  canvas.height = side;
  const ctx = canvas.getContext('2d');
  if (!ctx || crop === 0) throw new Error('not an image');
  ctx.imageSmoothingQuality = 'high';
  ctx.drawImage(img, (img.naturalWidth - crop) / 2, (img.naturalHeight - crop) / 2, crop, crop, 0, 0, side, side);
  return canvas.toDataURL('image/png');
}
