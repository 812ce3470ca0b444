// The page's policy: no inline styles or scripts but the one stylesheet cytoscape inserts, allowed by
// the hash of its exact text — checked here against the installed cytoscape, so an upgrade that
// changes the text fails now rather than as a blocked style in the Graph view.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY, CYTOSCAPE_STYLESHEET, CYTOSCAPE_STYLESHEET_SHA256 } from './csp.js';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const directives = () => new Map(CONTENT_SECURITY_POLICY.split('; ').map((d) => [d.split(' ')[0]!, d.split(' ').slice(1)]));

describe('CONTENT_SECURITY_POLICY', () => {
  it("allows no inline styles but cytoscape's stylesheet by hash, and no inline or eval'd script", () => {
    const policy = directives();
    expect(policy.get('style-src')).toEqual(["'self'", `'sha256-${CYTOSCAPE_STYLESHEET_SHA256}'`]);
    expect(policy.get('script-src')).toEqual(["'self'"]);
    expect(policy.get('default-src')).toEqual(["'self'"]);
    expect(policy.get('object-src')).toEqual(["'none'"]);
    expect(policy.get('base-uri')).toEqual(["'none'"]);
    expect(policy.get('frame-ancestors')).toEqual(["'none'"]);
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-(inline|eval|hashes)|nonce-|\*/);
  });

  it('hashes exactly the stylesheet text', () => {
    expect(createHash('sha256').update(CYTOSCAPE_STYLESHEET, 'utf8').digest('base64')).toBe(CYTOSCAPE_STYLESHEET_SHA256);
  });

  it('names the text the installed cytoscape inserts', () => {
    // BaseRenderer.init: className = '…'; stylesheet.textContent = '.' + className + ' { … }'.
    // The ES module build: the one Vite bundles (package.json exports' "import").
    const source = readFileSync(path.join(path.dirname(require.resolve('cytoscape')), 'cytoscape.esm.mjs'), 'utf8');
    const init = source.slice(source.indexOf('BRp.init = function'));
    const className = /var className = '([^']+)';/.exec(init)?.[1];
    const text = /stylesheet\.textContent = '\.' \+ className \+ '([^']*)';/.exec(init)?.[1];
    expect(className, 'cytoscape still names its container class').toBeDefined();
    expect(text, 'cytoscape still builds its stylesheet from the class name').toBeDefined();
    expect(`.${className}${text}`).toBe(CYTOSCAPE_STYLESHEET);
  });

  it('is the policy of the meta tag in renderer/index.html (which cannot carry frame-ancestors)', () => {
    const html = readFileSync(path.join(root, 'renderer', 'index.html'), 'utf8');
    const meta = /http-equiv="Content-Security-Policy"\s+content="([^"]+)"/.exec(html)?.[1];
    const withoutFraming = CONTENT_SECURITY_POLICY.split('; ')
      .filter((d) => !d.startsWith('frame-ancestors'))
      .join('; ');
    expect(meta).toBe(withoutFraming);
  });
});
