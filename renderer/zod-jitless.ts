// Imported first by main.tsx, so it runs before any zod schema is built (shared/api builds them as
// it loads, and each object schema decides then whether to compile a parser with new Function).
// The page's CSP has no 'unsafe-eval': zod would only probe, be refused and fall back, but every
// probe is a CSP violation report. Parsing in the page is small; the host keeps the compiled path.
import { config } from 'zod';

config({ jitless: true });
