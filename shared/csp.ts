// One Content-Security-Policy for the app page, whether served over app:// (desktop) or by the
// browser-mode server: scripts only from the app itself, no plugins, no framing. renderer/index.html
// carries the same policy as a meta tag (without frame-ancestors, which a meta tag cannot set).
//
// Styles come only from the app's own stylesheets: no 'unsafe-inline'. React's style={{…}} props
// set properties through the CSSOM, which CSP does not govern. The one inline stylesheet allowed is
// the rule cytoscape's renderer inserts into <head> when the Graph view first draws (a <style>
// element made at run time, which needs a hash); it is allowed by the hash of its exact text, so
// nothing else inline can ride on it. shared/csp.test.ts checks the text against the installed
// cytoscape and the hash against the text; e2e/app.ts fails any end-to-end test whose page reports
// a violation.

/** The text of the <style> cytoscape's renderer adds (BaseRenderer.init, cytoscape 3.x). */
export const CYTOSCAPE_STYLESHEET = '.__________cytoscape_container { position: relative; }';
/** base64 SHA-256 of CYTOSCAPE_STYLESHEET. */
export const CYTOSCAPE_STYLESHEET_SHA256 = 'pgvDUBa4IjFA2yuSJ2cqcyxmNYJMborsd0ORcRv9vw8=';

export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  `style-src 'self' 'sha256-${CYTOSCAPE_STYLESHEET_SHA256}'`,
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');
