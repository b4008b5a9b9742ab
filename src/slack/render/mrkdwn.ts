/** Slack's mrkdwn escaping, and the plain `text` fallback of a message part. */

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;" };

/** Escapes `&`, `<` and `>` as Slack requires in mrkdwn and in a message's `text`. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/[&<>]/g, (ch) => ESCAPES[ch] as string);
}

/**
 * The message's `text` fallback (notifications, screen readers) for a Markdown part:
 * escaped, and at most `maxLen` UTF-16 units, cut with an ellipsis where too long (never
 * inside an entity or a surrogate pair).
 */
export function toPlainFallback(markdown: string, maxLen: number): string {
  const escaped = escapeMrkdwn(markdown);
  if (escaped.length <= maxLen) return escaped;
  if (maxLen < 1) return "";
  const budget = maxLen - 1;
  let size = 0;
  let i = 0;
  for (; i < markdown.length; i++) {
    const ch = markdown[i] as string;
    const add = ESCAPES[ch]?.length ?? 1;
    if (size + add > budget) break;
    size += add;
  }
  const high = markdown.charCodeAt(i - 1);
  if (i > 0 && high >= 0xd800 && high <= 0xdbff) i--;
  return `${escapeMrkdwn(markdown.slice(0, i))}…`;
}
