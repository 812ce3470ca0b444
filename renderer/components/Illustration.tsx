import type { View } from '../stores/app.js';

// Small drawings, one per view, in the view's own metaphor (journal, book, map, list, cards, night).
// Strokes use currentColor and the accent so they follow the theme.
export function Illustration({ view }: { view: Exclude<View, 'chat' | 'settings'> }) {
  const common = {
    width: 160,
    height: 120,
    viewBox: '0 0 160 120',
    fill: 'none',
    strokeWidth: 1.6,
    strokeLinecap: 'round' as const,
    strokeLinejoin: 'round' as const,
    'aria-hidden': true,
    className: 'illustration',
  };
  switch (view) {
    case 'diary':
      return (
        <svg {...common}>
          <rect x="38" y="16" width="84" height="92" rx="6" className="ill-paper" />
          <path d="M52 16v92" className="ill-line" />
          <path d="M64 38h42M64 50h42M64 62h30M64 74h38" className="ill-soft" />
          <circle cx="104" cy="90" r="7" className="ill-accent-fill" />
        </svg>
      );
    case 'dreams':
      return (
        <svg {...common}>
          <path d="M30 96c16-6 34-6 50 0 16-6 34-6 50 0V28c-16-6-34-6-50 0-16-6-34-6-50 0v68Z" className="ill-paper" />
          <path d="M80 28v68" className="ill-line" />
          <path d="M106 44a10 10 0 1 1-12-12 8 8 0 0 0 12 12Z" className="ill-accent-fill" />
          <path d="M42 44h26M42 54h26M42 64h18M94 64h24M94 74h18" className="ill-soft" />
        </svg>
      );
    case 'graph':
      return (
        <svg {...common}>
          <path d="M44 40 80 60l36-24M80 60l-20 34M80 60l32 28M44 40l-8 38" className="ill-soft" />
          <circle cx="80" cy="60" r="10" className="ill-accent-fill" />
          <circle cx="44" cy="40" r="7" className="ill-paper" />
          <circle cx="116" cy="36" r="7" className="ill-paper" />
          <circle cx="60" cy="94" r="6" className="ill-paper" />
          <circle cx="112" cy="88" r="8" className="ill-paper" />
          <circle cx="36" cy="78" r="5" className="ill-paper" />
        </svg>
      );
    case 'pins':
      return (
        <svg {...common}>
          <rect x="36" y="24" width="88" height="20" rx="5" className="ill-paper" />
          <rect x="36" y="52" width="88" height="20" rx="5" className="ill-paper" />
          <rect x="36" y="80" width="88" height="20" rx="5" className="ill-paper ill-dashed" />
          <circle cx="48" cy="34" r="4" className="ill-accent-fill" />
          <circle cx="48" cy="62" r="4" className="ill-accent-fill" />
          <path d="M60 34h50M60 62h38" className="ill-soft" />
        </svg>
      );
    case 'memories':
      return (
        <svg {...common}>
          <rect x="50" y="18" width="76" height="52" rx="6" className="ill-paper" transform="rotate(6 88 44)" />
          <rect x="34" y="34" width="76" height="52" rx="6" className="ill-paper" transform="rotate(-4 72 60)" />
          <path d="M46 50h40M46 60h50M46 70h28" className="ill-soft" transform="rotate(-4 72 60)" />
          <circle cx="98" cy="48" r="5" className="ill-accent-fill" transform="rotate(-4 72 60)" />
          <path d="M52 102h56" className="ill-soft" />
        </svg>
      );
    case 'sleep':
      return (
        <svg {...common}>
          <path d="M104 30a24 24 0 1 0 22 32 20 20 0 0 1-22-32Z" className="ill-accent-fill" />
          <circle cx="40" cy="36" r="2" className="ill-star" />
          <circle cx="58" cy="22" r="1.5" className="ill-star" />
          <circle cx="132" cy="26" r="1.5" className="ill-star" />
          <path d="M24 96h112" className="ill-line" />
          <path d="M34 96V78h44a8 8 0 0 1 8 8v10M48 78v-6a6 6 0 0 1 12 0v6" className="ill-paper" />
        </svg>
      );
  }
}
