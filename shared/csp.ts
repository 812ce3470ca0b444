// One Content-Security-Policy for the app page, whether served over app:// (desktop) or by the
// browser-mode server: scripts only from the app itself, no plugins, no framing.
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');
