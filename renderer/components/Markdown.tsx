import { memo, useMemo, type ReactElement, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import Markdown, { defaultUrlTransform, type Components } from 'react-markdown';
import remarkGfm from 'remark-gfm';
import { api } from '../api/index.js';
import { CITATION_SCHEME, remarkCitations } from '../lib/citations.js';
import { CitationChip } from './CitationChip.js';

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function urlTransform(url: string): string {
  return url.startsWith(CITATION_SCHEME) ? url : defaultUrlTransform(url);
}

function ExternalLink({ href, children }: { href?: string; children?: ReactNode }) {
  if (!href) return <>{children}</>;
  // Citations: [[anima:ID]] became links with their own scheme (remarkCitations); they are chips.
  if (href.startsWith(CITATION_SCHEME)) return <CitationChip rawId={safeDecode(href.slice(CITATION_SCHEME.length))} />;
  const external = /^https?:/i.test(href);
  return (
    <a
      href={href}
      target={external ? '_blank' : undefined}
      rel="noopener noreferrer"
      onClick={(e) => {
        if (!external) return;
        // Links never navigate the app window itself.
        e.preventDefault();
        api().openExternal(href);
      }}
    >
      {children}
    </a>
  );
}

function ImageAsLink({ src, alt }: { src?: string | Blob; alt?: string }) {
  const { t } = useTranslation();
  // Remote images are blocked by the CSP (nothing loads behind the person's back); offer the link.
  if (typeof src !== 'string' || !src) return <>{alt}</>;
  return <ExternalLink href={src}>{t('chat.imageLink', { alt: alt || src })}</ExternalLink>;
}

const components: Components = {
  a: ({ href, children }) => <ExternalLink href={href}>{children}</ExternalLink>,
  img: ({ src, alt }) => <ImageAsLink src={src} alt={alt} />,
  table: ({ children }) => (
    <div className="table-wrap">
      <table>{children}</table>
    </div>
  ),
};

interface MdNode {
  type: string;
  value?: string;
  children?: MdNode[];
}

// Raw HTML in a reply is shown as the text it is, never rendered: a companion talking about
// <div> tags should be readable, and nothing a model writes should become markup.
function remarkHtmlAsText() {
  const walk = (node: MdNode, inPhrasing: boolean) => {
    if (!node.children) return;
    node.children = node.children.map((child) => {
      if (child.type !== 'html') {
        walk(child, child.type === 'paragraph' || child.type === 'heading' || inPhrasing);
        return child;
      }
      const text: MdNode = { type: 'text', value: child.value ?? '' };
      return inPhrasing ? text : { type: 'paragraph', children: [text] };
    });
  };
  return (tree: MdNode) => walk(tree, false);
}

// Citations last: raw HTML turned to text may hold markers too, and code never does.
const plugins = [remarkGfm, remarkHtmlAsText, remarkCitations];

// Parsing is the expensive part of showing a long conversation, and finished replies never change:
// their element trees are kept (by text) so reopening a conversation or paging back is cheap.
const CACHE_LIMIT = 600;
const cache = new Map<string, ReactElement>();

function render(content: string): ReactElement {
  // react-markdown's Markdown is a synchronous function of its props, so it can be called directly.
  return Markdown({ children: content, remarkPlugins: plugins, components, urlTransform }) as ReactElement;
}

function renderCached(content: string): ReactElement {
  const hit = cache.get(content);
  if (hit) {
    cache.delete(content);
    cache.set(content, hit);
    return hit;
  }
  const tree = render(content);
  cache.set(content, tree);
  if (cache.size > CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  return tree;
}

/** Assistant replies: GitHub-flavoured markdown, never raw HTML. */
export const MarkdownText = memo(function MarkdownText({ content, streaming = false }: { content: string; streaming?: boolean }) {
  // Text still arriving changes every frame; caching each version would only evict useful entries.
  const tree = useMemo(() => (streaming ? render(content) : renderCached(content)), [content, streaming]);
  return <div className={streaming ? 'markdown streaming' : 'markdown'}>{tree}</div>;
});
