import { z } from "zod";
import type { Inbound } from "../../bridge/inbound.js";
import { sharedFiles } from "../../files/kinds.js";

/**
 * Slack message and app_mention events, parsed at the edge. Anything that does not fit
 * (missing user or ts, wrong types) is refused here and never reaches the bridge.
 */
const MessageEventSchema = z.looseObject({
  type: z.enum(["message", "app_mention"]),
  subtype: z.string().optional(),
  bot_id: z.string().nullish(),
  user: z.string().min(1),
  text: z.string().default(""),
  ts: z.string().regex(/^\d+\.\d+$/),
  thread_ts: z
    .string()
    .regex(/^\d+\.\d+$/)
    .optional(),
  channel: z.string().min(1),
  channel_type: z.string().optional(),
  // In a Slack Connect channel `user_team` is the writer's own organisation; `team` is
  // usually that too. Neither is the installation, which the envelope names.
  team: z.string().optional(),
  user_team: z.string().optional(),
  files: z.array(z.unknown()).optional(),
  attachments: z.array(z.unknown()).optional(),
});

/**
 * A person's message with files arrives with `subtype: file_share`; it is the one
 * subtype we answer (its text, with its files). Every other subtype — edits, joins, the
 * bot's own `message_changed` — is ignored, as is anything with a `bot_id`.
 */
const ANSWERED_SUBTYPES = new Set(["file_share"]);

export type ParsedEvent =
  | {
      kind: "message";
      inbound: Omit<Inbound, "text"> & {
        rawText: string;
        authorTeam: string;
        /** Whether `user_team` named the writer's organisation (not only `team`). */
        authorTeamNamed: boolean;
      };
    }
  | { kind: "ignored"; reason: string }
  | { kind: "malformed"; issues: string };

/**
 * @param workspace the installation's workspace: it keys the conversation and the turn,
 *   whoever wrote the message (see installation.ts)
 */
export function parseMessageEvent(
  event: unknown,
  workspace: string,
  botUserId: string | undefined,
): ParsedEvent {
  const raw = event as { subtype?: unknown; bot_id?: unknown; user?: unknown } | undefined;
  if (raw && typeof raw === "object") {
    if (typeof raw.subtype === "string" && !ANSWERED_SUBTYPES.has(raw.subtype)) {
      return { kind: "ignored", reason: `subtype ${raw.subtype}` };
    }
    if (raw.bot_id) return { kind: "ignored", reason: "bot message" };
    if (botUserId !== undefined && raw.user === botUserId)
      return { kind: "ignored", reason: "own message" };
  }
  const parsed = MessageEventSchema.safeParse(event);
  if (!parsed.success) {
    return {
      kind: "malformed",
      issues: parsed.error.issues
        .map((i) => `${i.path.join(".") || "event"}: ${i.code}`)
        .join("; "),
    };
  }
  const e = parsed.data;
  const mentionedInText = botUserId !== undefined && e.text.includes(`<@${botUserId}`);
  return {
    kind: "message",
    inbound: {
      team: workspace,
      authorTeam: e.user_team || e.team || workspace,
      authorTeamNamed: Boolean(e.user_team),
      channel: e.channel,
      isDirect:
        e.channel_type === "im" || (e.channel_type === undefined && e.channel.startsWith("D")),
      threadTs: e.thread_ts ?? e.ts,
      ts: e.ts,
      user: e.user,
      rawText: e.text,
      files: sharedFiles(e.files),
      mentioned: e.type === "app_mention" || mentionedInText,
    },
  };
}
