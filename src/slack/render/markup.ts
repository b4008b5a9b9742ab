/**
 * The `<…>` items of Slack markup (`<@U1>`, `<#C1|general>`, `<!here>`, `<https://x|label>`),
 * found in one pass. Every parser of a person's message text reads items through here.
 *
 * Slack writes a literal `<` or `>` in the text around items as `&lt;` / `&gt;`, so an item is
 * a `<` and the next `>` with no `<` between them; a stray `<` or `>` is text.
 *
 * Why a loop and not a regular expression per kind of item: a pattern such as
 * `<@U…(\|[^>]*)?>` is tried again at every `<`, and each try runs on to the next `>`. On a
 * message of `<@U1|<@U1|…` with no `>` that is quadratic: 400 ms of blocked event loop for
 * Slack's 40,000 characters, minutes for a megabyte. Here each character is looked at once.
 */

/** One `<…>` item: where it is in the text, and what is between its brackets (still escaped). */
export interface MarkupItem {
  /** Index of its `<`. */
  start: number;
  /** Index just after its `>`. */
  end: number;
  inside: string;
}

const LT = 0x3c;
const GT = 0x3e;

/** The items of `text`, in order. */
export function* markupItems(text: string): Generator<MarkupItem> {
  let open = -1;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    // A later `<` starts the item over: the earlier one was a stray character.
    if (code === LT) open = i;
    else if (code === GT && open !== -1) {
      yield { start: open, end: i + 1, inside: text.slice(open + 1, i) };
      open = -1;
    }
  }
}

/** An item's target (`@U1`, `#C1`, `!here`, a URL) and its label after the first `|`, if any. */
export function itemParts(inside: string): { target: string; label: string | undefined } {
  const bar = inside.indexOf("|");
  return bar === -1
    ? { target: inside, label: undefined }
    : { target: inside.slice(0, bar), label: inside.slice(bar + 1) };
}
