import { z } from "zod";

/**
 * The prompts offered to a person starting a conversation in the app's Messages tab
 * (SUGGESTED_PROMPTS): JSON, either a list of `{"title", "message"}` (at most four) or
 * `{"title": "…", "prompts": [...]}` to name the list too; `[]` offers none.
 */

/** Prompts a person may click to ask; each sends its `message` as theirs. */
export interface SuggestedPrompts {
  /** Shown above the prompts. */
  title: string;
  /** At most four (Slack shows no more). */
  prompts: { title: string; message: string }[];
}

export const DEFAULT_SUGGESTED_PROMPTS: SuggestedPrompts = {
  title: "Try asking",
  prompts: [
    {
      title: "What can you do?",
      message: "What can you help me with? Give me three examples.",
    },
    {
      title: "Draft an update",
      message: "Help me write a short, clear update for my team. Ask me what it is about first.",
    },
    {
      title: "Explain simply",
      message: "Explain a technical topic to me in plain words. Ask me which topic first.",
    },
  ],
};

const SHAPE = 'each prompt must be {"title": "…", "message": "…"}';
/** A short text of a prompt: `what` names it in the error. */
const promptText = (what: string, max: number) =>
  z
    .string({ error: SHAPE })
    .trim()
    .min(1, `${what} is empty`)
    .max(max, `${what} is over ${max} characters`);
const promptList = z
  .array(
    z.object(
      {
        title: promptText("a prompt's title", 100),
        message: promptText("a prompt's message", 4000),
      },
      { error: SHAPE },
    ),
    { error: "it must be a list of prompts, or an object with one" },
  )
  .max(4, "Slack shows at most four prompts");
const titledList = z.object({
  title: promptText("the list's title", 100).default(DEFAULT_SUGGESTED_PROMPTS.title),
  prompts: promptList,
});
const promptOffer = z.union([
  promptList.transform((prompts) => ({ title: DEFAULT_SUGGESTED_PROMPTS.title, prompts })),
  titledList,
]);

/** SUGGESTED_PROMPTS's kind of value. */
export const suggestedPrompts = () =>
  z.string().transform((raw, ctx): SuggestedPrompts => {
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      ctx.addIssue(
        'it must be JSON, e.g. [{"title":"Summarise","message":"Summarise this for me"}]',
      );
      return z.NEVER;
    }
    const parsed = promptOffer.safeParse(value);
    if (parsed.success) return parsed.data;
    // A union's own issue says only that no branch fits: the issue of the branch meant.
    const meant = typeof value === "object" && value !== null && !Array.isArray(value);
    const issues = (meant ? titledList : promptList).safeParse(value).error?.issues;
    ctx.addIssue(issues?.[0]?.message ?? SHAPE);
    return z.NEVER;
  });
