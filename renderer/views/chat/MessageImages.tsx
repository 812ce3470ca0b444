// The images a person attached to a message, above its words: small in the chat, larger when clicked.
import { useEffect, useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import type { ImageRef } from '../../../shared/api.js';
import { imageUrl } from './attach.js';

/** The longest side of an image in the chat, by how many the message has. */
const BOX = [240, 240, 170, 128, 128];

/** The image's size scaled into a box (never enlarged): known before it loads, so nothing jumps. */
function fit(image: ImageRef, box: number): { width: number; height: number } {
  const scale = Math.min(1, box / Math.max(image.width, image.height));
  return { width: Math.max(24, Math.round(image.width * scale)), height: Math.max(24, Math.round(image.height * scale)) };
}

function StoredImage({ image, index, box }: { image: ImageRef; index: number; box: number }) {
  const { t } = useTranslation();
  const [url, setUrl] = useState<string | null>(null);
  const [failed, setFailed] = useState(false);
  const [open, setOpen] = useState(false);

  useEffect(() => {
    let live = true;
    imageUrl(image.id).then(
      (u) => live && setUrl(u),
      () => live && setFailed(true),
    );
    return () => {
      live = false;
    };
  }, [image.id]);

  const alt = t('images.alt', { n: index + 1 });
  if (failed) {
    return (
      <span className="msg-image missing" data-testid="message-image-missing">
        {t('images.missing')}
      </span>
    );
  }
  return (
    <button
      type="button"
      className={open ? 'msg-image open' : 'msg-image'}
      data-testid="message-image"
      aria-expanded={open}
      title={open ? t('images.smaller') : t('images.larger')}
      onClick={() => setOpen(!open)}
      style={open ? { width: `min(600px, ${image.width}px)`, aspectRatio: `${image.width} / ${image.height}` } : fit(image, box)}
    >
      {url ? <img src={url} alt={alt} width={image.width} height={image.height} /> : <span className="visually-hidden">{alt}</span>}
    </button>
  );
}

/** The message's images above its bubble (`children`); without images, the bubble alone. */
export function MessageImages({ images, children }: { images: ImageRef[] | undefined; children: ReactNode }) {
  if (!images?.length) return <>{children}</>;
  return (
    <div className="msg-user-body">
      <div className={`msg-images count-${images.length}`} data-testid="message-images">
        {images.map((image, i) => (
          <StoredImage key={`${image.id}-${i}`} image={image} index={i} box={BOX[images.length] ?? 128} />
        ))}
      </div>
      {children}
    </div>
  );
}
