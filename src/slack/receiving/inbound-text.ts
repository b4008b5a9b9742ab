import { itemParts, markupItems } from "../render/markup.js";

/**
 * Incoming Slack message text → readable plain text for the assistant service. Slack writes
 * mentions and links as `<…>` and escapes `&`, `<`, `>` everywhere else; the service should
 * see what the person saw.
 */

/** Names for ids found in the text; an id without a name is shown as the id. */
export interface NameLookup {
  user?(id: string): string | undefined;
  channel?(id: string): string | undefined;
}

const ENTITIES: Record<string, string> = { "&amp;": "&", "&lt;": "<", "&gt;": ">" };

/** Decodes the three entities Slack uses, in one pass (so `&amp;lt;` stays `&lt;`). */
function decode(text: string): string {
  return text.replace(/&(?:amp|lt|gt);/g, (entity) => ENTITIES[entity] as string);
}

const SPECIAL = new Set(["here", "channel", "everyone"]);

/** The readable form of one `<…>` item (its inside, still escaped). */
function readable(inside: string, lookup: NameLookup): string {
  const { target, label: escapedLabel } = itemParts(inside);
  const label = escapedLabel === undefined ? undefined : decode(escapedLabel);
  const named = (name: string | undefined) => (name?.trim() ? name.trim() : undefined);

  switch (target[0]) {
    case "@": {
      const id = target.slice(1);
      return `@${named(label)?.replace(/^@/, "") ?? named(lookup.user?.(id)) ?? id}`;
    }
    case "#": {
      const id = target.slice(1);
      return `#${named(label)?.replace(/^#/, "") ?? named(lookup.channel?.(id)) ?? id}`;
    }
    case "!": {
      const command = target.slice(1);
      if (SPECIAL.has(command)) return `@${command}`;
      const subteam = /^subteam\^(.+)$/.exec(command);
      if (subteam) return `@${named(label)?.replace(/^@/, "") ?? subteam[1]}`;
      // Anything else (`<!date^…|fallback>`) shows its fallback text.
      return named(label) ?? decode(command);
    }
  }

  const url = decode(target);
  if (url.startsWith("mailto:")) {
    const address = url.slice("mailto:".length);
    return label === undefined || label === address || label === url
      ? address
      : `${label} (${address})`;
  }
  // Slack links a typed `example.com` as `<http://example.com|example.com>`: keep what was typed.
  if (label === undefined || label === url) return url;
  if (label === url.replace(/^[a-z][a-z0-9+.-]*:\/\//i, "")) return label;
  return `${label} (${url})`;
}

/**
 * Slack message text made readable: `<@U1>` → `@name` (or `@U1`), `<#C1|general>` →
 * `#general`, `<!here>` → `@here`, `<!subteam^S1|@team>` → `@team`, `<https://x|label>` →
 * `label (https://x)` (just the URL when there is no other label), `<mailto:a@b|a@b>` → `a@b`,
 * and `&amp;`, `&lt;`, `&gt;` decoded everywhere else.
 */
export function slackTextToPlain(text: string, lookup: NameLookup = {}): string {
  let out = "";
  let last = 0;
  for (const item of markupItems(text)) {
    out += decode(text.slice(last, item.start)) + readable(item.inside, lookup);
    last = item.end;
  }
  return out + decode(text.slice(last));
}

/**
 * Removes every mention of the bot (`<@BOT>` or `<@BOT|name>`) with the spaces after it, and
 * trims; a `:` or `,` left at the start ("@bot: do this") goes too.
 */
export function stripBotMention(text: string, botUserId: string): string {
  let out = "";
  let last = 0;
  for (const item of markupItems(text)) {
    if (itemParts(item.inside).target !== `@${botUserId}`) continue;
    out += text.slice(last, item.start);
    last = item.end;
    while (text[last] === " " || text[last] === "\t") last++;
  }
  return (out + text.slice(last))
    .trim()
    .replace(/^[,:][ \t]*/, "")
    .trim();
}
