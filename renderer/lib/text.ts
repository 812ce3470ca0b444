/**
 * Previews and search snippets are cut from stored message text, which is markdown; in a one-line
 * list the markers are noise ("**garden**"), so they are dropped. Citations go too.
 */
export function plainText(markdown: string): string {
  return markdown
    .replace(/\[\[anima:[^\]]{1,64}\]\]/g, '')
    .replace(/```[a-z]*\n?/gi, '')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/(\*\*|__)(?=\S)([^*_]*?\S)\1/g, '$2')
    .replace(/(^|[\s(])[*_](?=\S)([^*_]*?\S)[*_](?=[\s).,!?;:]|$)/g, '$1$2')
    .replace(/\*\*|__/g, '')
    .replace(/^\s{0,3}(#{1,6}\s+|>\s?|[-*+]\s+|\d+[.)]\s+)/gm, '')
    .replace(/\|/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}
