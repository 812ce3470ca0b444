// Line icons drawn for Anima: 24-unit grid, 1.6 stroke, round joins — quiet enough for a rail.
import type { SVGProps } from 'react';

const paths = {
  chat: 'M5 5.5h14a1.5 1.5 0 0 1 1.5 1.5v8.5A1.5 1.5 0 0 1 19 17h-7.5L7 20.5V17H5a1.5 1.5 0 0 1-1.5-1.5V7A1.5 1.5 0 0 1 5 5.5Z',
  diary: 'M6.5 3.5h11a1.5 1.5 0 0 1 1.5 1.5v14a1.5 1.5 0 0 1-1.5 1.5h-11A1.5 1.5 0 0 1 5 19V5a1.5 1.5 0 0 1 1.5-1.5ZM9 3.5v17M11.5 8h4.5M11.5 11.5h4.5',
  dreams: 'M19.5 14.5A8 8 0 0 1 9.5 4.5a8 8 0 1 0 10 10ZM16 3.5v3M14.5 5h3',
  graph:
    'M6.5 8.5a2 2 0 1 0 0-4 2 2 0 0 0 0 4ZM17.5 10a2 2 0 1 0 0-4 2 2 0 0 0 0 4ZM9.5 19.5a2 2 0 1 0 0-4 2 2 0 0 0 0 4ZM8.3 7.3l7.3 0.9M7.2 8.4l1.6 7.2M11.3 16.6l4.8-5.2',
  pins: 'M9 3.5h6l-1 5 3.5 3.5v1.5h-11V12L10 8.5l-1-5ZM12 13.5v7',
  memories: 'M4.5 8.5h15v10a1.5 1.5 0 0 1-1.5 1.5H6a1.5 1.5 0 0 1-1.5-1.5v-10ZM6.5 6h11M8.5 3.5h7M8.5 12.5h7M8.5 15.5h4.5',
  sleep: 'M4 17.5h16M5 17.5V9M19 17.5v-3.5a2 2 0 0 0-2-2h-7.5v5.5M7.5 12.5a1.5 1.5 0 1 0 0-3 1.5 1.5 0 0 0 0 3ZM14 4.5h3l-3 3h3',
  settings:
    'M12 15a3 3 0 1 0 0-6 3 3 0 0 0 0 6ZM19.4 13.5l1.6 1.2-2 3.4-1.9-.7a7.5 7.5 0 0 1-2.2 1.3l-.3 2h-4l-.3-2a7.5 7.5 0 0 1-2.2-1.3l-1.9.7-2-3.4 1.6-1.2a7.6 7.6 0 0 1 0-3L2.2 9.3l2-3.4 1.9.7A7.5 7.5 0 0 1 8.3 5.3l.3-2h4l.3 2a7.5 7.5 0 0 1 2.2 1.3l1.9-.7 2 3.4-1.6 1.2a7.6 7.6 0 0 1 0 3Z',
  plus: 'M12 5v14M5 12h14',
  search: 'M11 18a7 7 0 1 0 0-14 7 7 0 0 0 0 14ZM20 20l-4-4',
  archive: 'M4 5h16v4H4zM5.5 9v9.5A1.5 1.5 0 0 0 7 20h10a1.5 1.5 0 0 0 1.5-1.5V9M10 13h4',
  unarchive: 'M4 5h16v4H4zM5.5 9v9.5A1.5 1.5 0 0 0 7 20h10a1.5 1.5 0 0 0 1.5-1.5V9M12 17.5v-5.5M9.5 14.5 12 12l2.5 2.5',
  pencil: 'M15.5 5.5l3 3M5 16l10-10 3 3-10 10H5v-3Z',
  trash: 'M4.5 7h15M9.5 7V4.5h5V7M6.5 7l1 12.5A1.5 1.5 0 0 0 9 21h6a1.5 1.5 0 0 0 1.5-1.5l1-12.5M10 11v6M14 11v6',
  offRecord: 'M3.5 12s3-6 8.5-6c1.5 0 2.8.4 4 1M20.5 12s-3 6-8.5 6c-1.5 0-2.8-.4-4-1M9.5 12a2.5 2.5 0 0 1 2.5-2.5M4 20 20 4',
  stop: 'M8 8h8v8H8z',
  send: 'M12 19V5M6 11l6-6 6 6',
  regenerate: 'M19.5 12a7.5 7.5 0 1 1-2.2-5.3M19.5 4.5v4h-4',
  copy: 'M9 9h10v10H9zM5 15V5h10',
  check: 'M5 12.5l4.5 4.5L19 7.5',
  close: 'M6 6l12 12M18 6 6 18',
  alert: 'M12 8v5M12 16.5v.01M10.3 4.3 2.8 17.5A2 2 0 0 0 4.5 20.5h15a2 2 0 0 0 1.7-3L13.7 4.3a2 2 0 0 0-3.4 0Z',
  arrowDown: 'M12 5v14M6 13l6 6 6-6',
  sparkle: 'M12 3.5l1.8 5.2 5.2 1.8-5.2 1.8L12 17.5l-1.8-5.2L5 10.5l5.2-1.8L12 3.5Z',
  server: 'M4.5 5h15v5.5h-15zM4.5 13.5h15V19h-15zM7.5 7.75h.01M7.5 16.25h.01',
  folder: 'M3.5 6.5A1.5 1.5 0 0 1 5 5h4.5l2 2H19a1.5 1.5 0 0 1 1.5 1.5V17a1.5 1.5 0 0 1-1.5 1.5H5A1.5 1.5 0 0 1 3.5 17V6.5Z',
  globe: 'M12 20.5a8.5 8.5 0 1 0 0-17 8.5 8.5 0 0 0 0 17ZM3.5 12h17M12 3.5c2.3 2.3 3.5 5.2 3.5 8.5s-1.2 6.2-3.5 8.5c-2.3-2.3-3.5-5.2-3.5-8.5s1.2-6.2 3.5-8.5Z',
  sun: 'M12 16a4 4 0 1 0 0-8 4 4 0 0 0 0 8ZM12 2.5v2M12 19.5v2M4.6 4.6 6 6M18 18l1.4 1.4M2.5 12h2M19.5 12h2M4.6 19.4 6 18M18 6l1.4-1.4',
  person: 'M12 12a4 4 0 1 0 0-8 4 4 0 0 0 0 8ZM4.5 20.5a7.5 7.5 0 0 1 15 0',
  brain:
    'M9 4.5a3 3 0 0 0-3 3 3 3 0 0 0-1.5 5.5A3 3 0 0 0 8 18a2.5 2.5 0 0 0 4 1.5V6a2.5 2.5 0 0 0-3-1.5ZM15 4.5a3 3 0 0 1 3 3 3 3 0 0 1 1.5 5.5A3 3 0 0 1 16 18a2.5 2.5 0 0 1-4 1.5',
} as const;

export type IconName = keyof typeof paths;

export function Icon({ name, size = 20, ...rest }: { name: IconName; size?: number } & SVGProps<SVGSVGElement>) {
  return (
    <svg
      width={size}
      height={size}
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      strokeWidth={1.6}
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
      focusable="false"
      {...rest}
    >
      <path d={paths[name]} />
    </svg>
  );
}
