// A name for this device, guessed from its user agent, to prefill the pair page (the person can change it);
// and a certificate fingerprint laid out to compare by eye.
export function deviceNameFrom(userAgent: string): string {
  const ua = userAgent;
  const browser = /Edg\//.test(ua) ? 'Edge' : /Firefox\//.test(ua) ? 'Firefox' : /Chrome\//.test(ua) ? 'Chrome' : /Safari\//.test(ua) ? 'Safari' : null;
  const device = /iPhone/.test(ua)
    ? 'iPhone'
    : /iPad/.test(ua)
      ? 'iPad'
      : /Android/.test(ua)
        ? /Mobile/.test(ua)
          ? 'Android phone'
          : 'Android tablet'
        : /Macintosh|Mac OS X/.test(ua)
          ? 'Mac'
          : /Windows/.test(ua)
            ? 'Windows PC'
            : /CrOS/.test(ua)
              ? 'Chromebook'
              : /Linux/.test(ua)
                ? 'Linux computer'
                : 'Device';
  return browser ? `${device} (${browser})` : device;
}

/** AB:CD:… (32 bytes) in rows of eight bytes, so a line never breaks inside a byte. */
export function fingerprintRows(fingerprint: string): string {
  const bytes = fingerprint.split(':');
  const rows: string[] = [];
  for (let i = 0; i < bytes.length; i += 8) rows.push(bytes.slice(i, i + 8).join(':'));
  return rows.join('\n');
}
