import { z } from "zod";

/**
 * What the bot reads of Slack's Web API answers, as zod schemas: the WebClient has already
 * turned `ok: false` into its own errors, so these describe successful answers only. A
 * field the bot relies on that is missing or of the wrong type is a SlackResponseError;
 * whatever else Slack adds is let through untouched.
 */

/** The `code` a SlackResponseError carries, beside the WebClient's own `slack_webapi_*` codes. */
export const INVALID_RESPONSE_CODE = "slack_bridge_invalid_response";

/** Slack answered a call successfully, but not in a shape the bot can use. */
export class SlackResponseError extends Error {
  readonly code = INVALID_RESPONSE_CODE;

  constructor(
    readonly method: string,
    readonly problem: string,
  ) {
    super(`Slack's answer to ${method} was not understood: ${problem}.`);
    this.name = "SlackResponseError";
  }
}

/**
 * Parses one answer of `method`. The error names the first field at fault and what was
 * wrong with it, never a value from the answer (it may hold people's messages).
 */
export function parseResponse<T>(method: string, schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue?.path.length ? `${issue.path.join(".")}: ` : "";
  throw new SlackResponseError(method, `${where}${issue?.message ?? "invalid"}`);
}

/** A message ts: seconds, a dot and a sequence number ("1700000000.000100"). */
const Ts = z.string().regex(/^\d+(\.\d+)?$/, "not a message ts");

export const PostedMessage = z.looseObject({ ts: Ts });

export const Permalink = z.looseObject({ permalink: z.string().min(1) });

/**
 * `users.info`: the names a person may go by (any of them may be empty), their own workspace
 * and Enterprise org, and whether they are a guest (`is_restricted`: multi-channel,
 * `is_ultra_restricted`: single-channel).
 */
export const UserInfo = z.looseObject({
  user: z.looseObject({
    name: z.string().optional(),
    real_name: z.string().optional(),
    team_id: z.string().optional(),
    is_restricted: z.boolean().optional(),
    is_ultra_restricted: z.boolean().optional(),
    is_admin: z.boolean().optional(),
    is_owner: z.boolean().optional(),
    is_primary_owner: z.boolean().optional(),
    enterprise_user: z.looseObject({ enterprise_id: z.string().optional() }).nullish(),
    profile: z
      .looseObject({
        display_name: z.string().nullish(),
        real_name: z.string().nullish(),
      })
      .optional(),
  }),
});

/**
 * `auth.test`: who the token belongs to. A bot token always has a bot id; `enterprise_id` is
 * set (non-empty) only in a workspace of an Enterprise org.
 */
export const AuthTest = z.looseObject({
  user_id: z.string().min(1),
  bot_id: z.string().min(1).optional(),
  team_id: z.string().min(1),
  enterprise_id: z.string().nullish(),
  url: z.string().nullish(),
});

/** The parts of a block the bot reads back: its type and, for actions, the elements' ids. */
const ReadBlock = z.looseObject({
  type: z.string(),
  elements: z
    .array(z.looseObject({ action_id: z.unknown().optional(), value: z.unknown().optional() }))
    .optional(),
});

/** One message of a thread, as conversations.replies gives it. */
export const SlackMessage = z.looseObject({
  ts: Ts,
  subtype: z.string().optional(),
  user: z.string().optional(),
  // The writer's own organisation in a channel shared with others (as in events); `team`
  // names a workspace too, not always the writer's there.
  user_team: z.string().nullish(),
  team: z.string().nullish(),
  bot_id: z.string().nullish(),
  username: z.string().optional(),
  bot_profile: z
    .looseObject({ name: z.string().optional(), team_id: z.string().nullish() })
    .nullish(),
  text: z.string().default(""),
  // Read entry by entry where they are used (files/kinds.ts: sharedFiles).
  files: z.array(z.unknown()).optional(),
  // Blocks are only read back to find the bot's own buttons: odd blocks cost no message.
  blocks: z.array(ReadBlock).optional().catch(undefined),
  // Only with `include_all_metadata`: the bot's marks (message-mark.ts); odd ones are ignored.
  metadata: z
    .looseObject({
      event_type: z.string(),
      event_payload: z.record(z.string(), z.unknown()).optional(),
    })
    .optional()
    .catch(undefined),
});
export type SlackMessage = z.infer<typeof SlackMessage>;

/** One page of conversations.replies; the messages are checked one by one (see below). */
export const RepliesPage = z.looseObject({
  messages: z.array(z.unknown()).default([]),
  has_more: z.boolean().optional(),
  response_metadata: z.looseObject({ next_cursor: z.string().optional() }).optional(),
});

/** A page of a thread, read. */
export interface ThreadPage {
  /** The page's messages; one Slack sent in a shape the bot cannot read is left out. */
  messages: SlackMessage[];
  /** Set when Slack has more messages after this page: pass it as the next `cursor`. */
  nextCursor: string | undefined;
}

/**
 * Reads a conversations.replies answer. A page that is not a page fails; a single message
 * without a ts is left out rather than failing the thread (Slack never sends one, and the
 * rest of the thread is still worth passing on).
 */
export function readRepliesPage(body: unknown): ThreadPage {
  const page = parseResponse("conversations.replies", RepliesPage, body);
  const messages: SlackMessage[] = [];
  for (const raw of page.messages) {
    const message = SlackMessage.safeParse(raw);
    if (message.success) messages.push(message.data);
  }
  const cursor = page.response_metadata?.next_cursor;
  // Slack sends an empty cursor on the last page; has_more is the older signal of the same.
  const more = page.has_more !== false && cursor !== undefined && cursor !== "";
  return { messages, nextCursor: more ? cursor : undefined };
}
