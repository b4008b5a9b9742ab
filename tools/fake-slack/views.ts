/**
 * Views as Slack checks them: `views.open` (a modal, on a trigger used once) and
 * `views.publish` (a person's Home tab). Slack answers `invalid_arguments` for a view it
 * cannot show (more than 100 blocks, a title over 24 characters, a wrong type) and
 * `exchanged_trigger_id` for a trigger already used.
 */

type Body = { ok: true; [key: string]: unknown } | { ok: false; error: string };
type Args = Record<string, unknown>;

/** Slack's limits of a view. */
const MAX_BLOCKS = 100;
const MAX_TITLE = 24;
const MAX_PRIVATE_METADATA = 3_000;

export interface PublishedView {
  user_id: string;
  view: Record<string, unknown>;
}

/** What the views keep between calls. */
export interface ViewState {
  /** Every trigger a view was opened on: each opens one view. */
  readonly usedTriggers: Set<string>;
  /** Every views.publish, in order. */
  readonly published: PublishedView[];
}

const fail = (error: string): Body => ({ ok: false, error });

/** The `view` argument as an object (a form post sends it as JSON text). */
export function readView(args: Args): Record<string, unknown> | undefined {
  let view = args.view;
  if (typeof view === "string") {
    try {
      view = JSON.parse(view);
    } catch {
      return undefined;
    }
  }
  return typeof view === "object" && view !== null && !Array.isArray(view)
    ? (view as Record<string, unknown>)
    : undefined;
}

/** Why Slack would refuse to show this view, if it would. */
export function viewProblem(
  view: Record<string, unknown>,
  type: "modal" | "home",
): string | undefined {
  if (view.type !== type) return `view.type must be ${type}`;
  const blocks = view.blocks;
  if (!Array.isArray(blocks)) return "view.blocks must be an array";
  if (blocks.length > MAX_BLOCKS) return `view.blocks has more than ${MAX_BLOCKS} items`;
  const meta = view.private_metadata;
  if (typeof meta === "string" && meta.length > MAX_PRIVATE_METADATA)
    return "private_metadata is too long";
  if (type === "modal") {
    const title = (view.title as { text?: unknown } | undefined)?.text;
    if (typeof title !== "string" || title === "") return "a modal needs a title";
    if (title.length > MAX_TITLE) return `view.title is over ${MAX_TITLE} characters`;
    const hasInput = blocks.some((b) => (b as { type?: unknown }).type === "input");
    if (hasInput && view.submit === undefined) return "a modal with inputs needs a submit button";
  }
  return undefined;
}

/** Checks the trigger and the modal; undefined when Slack would open it. */
export function openProblem(
  state: ViewState,
  triggerId: string | undefined,
  view: Record<string, unknown> | undefined,
): Body | undefined {
  if (triggerId === undefined || triggerId === "") return fail("invalid_trigger_id");
  if (state.usedTriggers.has(triggerId)) return fail("exchanged_trigger_id");
  if (view === undefined || viewProblem(view, "modal") !== undefined)
    return fail("invalid_arguments");
  state.usedTriggers.add(triggerId);
  return undefined;
}

/** `views.publish`: the Home tab of `user_id`, replacing what it showed. */
export function publishView(
  state: ViewState,
  args: Args,
  users: ReadonlyMap<string, unknown>,
  teamId: string,
): Body {
  const userId = typeof args.user_id === "string" ? args.user_id : undefined;
  const view = readView(args);
  if (userId === undefined || view === undefined) return fail("invalid_arguments");
  if (!users.has(userId)) return fail("user_not_found");
  if (viewProblem(view, "home") !== undefined) return fail("invalid_arguments");
  state.published.push({ user_id: userId, view });
  return { ok: true, view: { ...view, id: `VH${state.published.length}`, team_id: teamId } };
}
