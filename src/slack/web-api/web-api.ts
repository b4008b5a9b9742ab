import type { types as Slack } from "@slack/bolt";
import type { WebClient } from "@slack/web-api";
import { type Downloaded, type DownloadOptions, downloadSlackFile } from "../../files/download.js";
import { type SharedFile, sharedFiles } from "../../files/kinds.js";
import { quietMarkdown, quietMessage } from "../render/quiet-mentions.js";
import type { MessageMark } from "./message-mark.js";
import {
  AuthTest,
  Permalink,
  PostedMessage,
  parseResponse,
  readRepliesPage,
  type ThreadPage,
  UserInfo,
} from "./web-api-responses.js";

export { type SlackMessage, SlackResponseError, type ThreadPage } from "./web-api-responses.js";

/** Blocks as Slack's Web API takes them. */
export type MessageBlocks = (Slack.KnownBlock | Slack.Block)[];

export interface PostMessageArgs {
  channel: string;
  /** The thread's parent ts: the message is a reply in that thread. */
  thread_ts?: string;
  /** The notification and accessibility text; also what shows when blocks cannot. */
  text: string;
  blocks?: MessageBlocks;
  /** Default false: a link in an answer does not grow a preview under it. */
  unfurl_links?: boolean;
  /** Default false: nor does an image or video link. */
  unfurl_media?: boolean;
  /** The invisible mark by which the bot finds this message again (message-mark.ts). */
  metadata?: MessageMark;
}

export interface UpdateMessageArgs {
  channel: string;
  ts: string;
  text: string;
  blocks?: MessageBlocks;
  /** The message's mark, sent again with every edit so that no edit can drop it. */
  metadata?: MessageMark;
}

/** A piece of a native stream: Markdown, a task card, a plan title, or blocks. */
export type StreamChunk = Slack.AnyChunk;

export interface StartStreamArgs {
  channel: string;
  /** The thread's parent ts: the streamed message is a reply in that thread. */
  thread_ts: string;
  /** Who the answer is for (the asker) and their workspace; Slack wants both in channels. */
  recipient_user_id: string;
  recipient_team_id: string;
  /** What the message starts with (never empty). */
  chunks: StreamChunk[];
}

export interface AppendStreamArgs {
  channel: string;
  /** The streaming message. */
  ts: string;
  chunks: StreamChunk[];
}

export interface StopStreamArgs {
  channel: string;
  ts: string;
  /** The mark the message keeps (a stream cannot carry one before it stops). */
  metadata?: MessageMark;
  /** The last of the answer, appended as the stream ends. */
  chunks?: StreamChunk[];
  /** Shown under the finished message (the feedback buttons). */
  blocks?: Slack.KnownBlock[];
}

export interface EphemeralArgs {
  channel: string;
  /** The one person who sees it. */
  user: string;
  text: string;
  thread_ts?: string;
}

export interface RepliesArgs {
  channel: string;
  /** The thread's parent ts. */
  ts: string;
  /** Messages per page; Slack advises at most 200. */
  limit: number;
  cursor?: string;
  /** Only messages after this ts (with `inclusive: false`). */
  oldest?: string;
  inclusive?: boolean;
  /** Default false: with true, messages carry their `metadata` (the bot's marks). */
  include_all_metadata?: boolean;
}

/** `assistant.threads.setStatus`: the line under a thread saying what the app is doing. */
export interface ThreadStatusArgs {
  channel_id: string;
  thread_ts: string;
  /** Shown as "<App name> <status>"; "" clears it. */
  status: string;
  /** Up to 10 lines Slack rotates through instead of the status while it shows. */
  loading_messages?: string[];
}

/** One suggested prompt: a button's `title`, and the `message` it sends as the person. */
export interface SuggestedPrompt {
  title: string;
  message: string;
}

/** `assistant.threads.setSuggestedPrompts`. */
export interface SuggestedPromptsArgs {
  channel_id: string;
  /** Only in the legacy assistant view; an agent-view app leaves it out (Slack ignores the call). */
  thread_ts?: string;
  /** Above the prompts, e.g. "Try asking". */
  title?: string;
  /** Up to four. */
  prompts: SuggestedPrompt[];
}

/** `agents.sessions.setStatus`: a thread's agent session, created by the first call. */
export interface SessionStatusArgs {
  channel_id: string;
  thread_ts: string;
  /** `processing` shows Slack's stop control; `active` is a session at rest. */
  status: "active" | "processing" | "suspended" | "closed";
  /** At most 200 characters; used only when the call creates the session. */
  title?: string;
  /** The person who started the session; used only when the call creates it. */
  initiator_user_id?: string;
}

/** Who the bot's token belongs to. */
export interface Identity {
  userId: string;
  /** Undefined for a token that is not a bot's. */
  botId: string | undefined;
  /** The workspace the bot is installed in. */
  teamId: string;
  /** Its Enterprise org; undefined outside Enterprise Grid. */
  enterpriseId: string | undefined;
  /** The workspace's address (`https://<name>.slack.com/`): links to threads start with it. */
  url?: string | undefined;
}

/** What `users.info` says of a person, as far as the bot uses it. */
export interface SlackPerson {
  /** The name to show; undefined when every name is empty. */
  displayName: string | undefined;
  /** The person's own workspace. */
  teamId: string | undefined;
  /** Their Enterprise org, when they belong to one. */
  enterpriseId: string | undefined;
  /** A guest account: restricted (multi-channel) or ultra-restricted (single-channel). */
  guest: boolean;
  /** A workspace admin or owner (`is_admin`, `is_owner`, `is_primary_owner`). */
  admin: boolean;
}

/**
 * The Slack Web API calls the bot makes, one typed function per method. Failures are the
 * WebClient's own errors (`classifyCallFailure` reads them); an answer the bot cannot read
 * is a SlackResponseError. Nothing else in the bot calls the WebClient, so every message it
 * writes (post, edit, ephemeral; a stream, when there is one) passes through `quietMessage`
 * here: nothing the bot posts notifies anyone (quiet-mentions.ts).
 */
export interface SlackWebApi {
  /** `chat.postMessage`; resolves with the new message's ts. */
  postMessage(args: PostMessageArgs): Promise<{ ts: string }>;
  /** `chat.update`: replaces the text and, when given, the blocks. */
  updateMessage(args: UpdateMessageArgs): Promise<void>;
  /** `chat.delete`. */
  deleteMessage(args: { channel: string; ts: string }): Promise<void>;
  /** `chat.postEphemeral`: a note only `user` sees. */
  postEphemeral(args: EphemeralArgs): Promise<void>;
  /** `chat.getPermalink`: the link to a message. */
  getPermalink(args: { channel: string; message_ts: string }): Promise<string>;
  /**
   * `users.info`: the name to show for a person (display name, else real name, else
   * handle), their workspace and org, and whether they are a guest.
   */
  userInfo(user: string): Promise<SlackPerson>;
  /** `conversations.replies`: one page of a thread, oldest first. */
  replies(args: RepliesArgs): Promise<ThreadPage>;
  /** `auth.test`. */
  authTest(): Promise<Identity>;
  /** `views.open`: a modal, in answer to an interaction's trigger. */
  openView(args: { trigger_id: string; view: Slack.ModalView }): Promise<void>;
  /** `views.publish`: the app's Home tab as one person sees it. */
  publishView(args: { user_id: string; view: Slack.HomeView }): Promise<void>;
  /** `assistant.threads.setStatus`. */
  setThreadStatus(args: ThreadStatusArgs): Promise<void>;
  /** `assistant.threads.setSuggestedPrompts`. */
  setSuggestedPrompts(args: SuggestedPromptsArgs): Promise<void>;
  /** `agents.sessions.setStatus`. */
  setSessionStatus(args: SessionStatusArgs): Promise<void>;
  /** `agents.sessions.rename`: the title, 1–200 characters. */
  renameSession(args: { channel_id: string; thread_ts: string; title: string }): Promise<void>;
  /** `chat.startStream`: a new streaming message; resolves with its ts. */
  startStream(args: StartStreamArgs): Promise<{ ts: string }>;
  /** `chat.appendStream`: adds chunks to a streaming message. */
  appendStream(args: AppendStreamArgs): Promise<void>;
  /**
   * A file people shared, downloaded from its `url_private` with this workspace's bot token,
   * which goes to no host but `options.allowedHosts` (files/download.ts).
   */
  downloadFile(url: string, options: DownloadOptions): Promise<Downloaded>;
  /** `files.info`: a shared file's object; undefined when Slack does not describe it. */
  fileInfo(id: string): Promise<SharedFile | undefined>;
  /** `chat.stopStream`: ends a stream; the message stays as it was streamed. */
  stopStream(args: StopStreamArgs): Promise<void>;
}

/** The Web API of each workspace: its calls carry the bot token of that workspace's installation. */
export type SlackApis = (team: string) => SlackWebApi;

/**
 * The bot's Web API calls over a WebClient (the Bolt app's). Without `token` the client's
 * own bot token is used (one workspace, SLACK_BOT_TOKEN); with it, every call carries the
 * token it gives at the time of the call (an installation's, many workspaces), which throws
 * when the workspace has none any more.
 */
export function slackWebApi(
  client: WebClient,
  token?: () => string | Promise<string>,
): SlackWebApi {
  /** The token argument of one call, read as it is made. */
  const auth = async (): Promise<{ token?: string }> =>
    token === undefined ? {} : { token: await token() };
  return {
    async downloadFile(url, options) {
      const bearer = token === undefined ? client.token : await token();
      if (bearer === undefined) return { ok: false, reason: "not_allowed" };
      return downloadSlackFile(url, bearer, options);
    },

    async fileInfo(id) {
      const answer = await client.files.info({ ...(await auth()), file: id });
      return sharedFiles([answer.file])[0];
    },

    async postMessage({ unfurl_links = false, unfurl_media = false, ...message }) {
      const answer = await client.chat.postMessage({
        ...(await auth()),
        ...quietMessage(message),
        unfurl_links,
        unfurl_media,
      });
      return { ts: parseResponse("chat.postMessage", PostedMessage, answer).ts };
    },

    async updateMessage(args) {
      await client.chat.update({ ...(await auth()), ...quietMessage(args) });
    },

    async deleteMessage(args) {
      await client.chat.delete({ ...(await auth()), ...args });
    },

    async postEphemeral(args) {
      await client.chat.postEphemeral({ ...(await auth()), ...quietMessage(args) });
    },

    async getPermalink(args) {
      const answer = await client.chat.getPermalink({ ...(await auth()), ...args });
      return parseResponse("chat.getPermalink", Permalink, answer).permalink;
    },

    async userInfo(user) {
      const answer = parseResponse(
        "users.info",
        UserInfo,
        await client.users.info({ ...(await auth()), user }),
      );
      const { name, real_name, profile, team_id, enterprise_user } = answer.user;
      // The first name that is set: an empty display name means "use the real name".
      const shown = [profile?.display_name, profile?.real_name, real_name, name].find(
        (candidate) => typeof candidate === "string" && candidate.trim() !== "",
      );
      return {
        displayName: shown ?? undefined,
        teamId: team_id || undefined,
        enterpriseId: enterprise_user?.enterprise_id || undefined,
        guest: answer.user.is_restricted === true || answer.user.is_ultra_restricted === true,
        admin: [answer.user.is_admin, answer.user.is_owner, answer.user.is_primary_owner].some(
          (flag) => flag === true,
        ),
      };
    },

    async replies(args) {
      return readRepliesPage(await client.conversations.replies({ ...(await auth()), ...args }));
    },

    async authTest() {
      const answer = parseResponse("auth.test", AuthTest, await client.auth.test(await auth()));
      return {
        userId: answer.user_id,
        botId: answer.bot_id,
        teamId: answer.team_id,
        enterpriseId: answer.enterprise_id || undefined,
        url: answer.url || undefined,
      };
    },

    async openView(args) {
      await client.views.open({ ...(await auth()), ...args });
    },

    async publishView(args) {
      await client.views.publish({ ...(await auth()), ...args });
    },

    // The agent surface's words (status lines, titles, prompts) are shown by Slack, so they
    // leave quiet too, whoever wrote them: a question's text, an operator's prompts.
    async setThreadStatus({ status, loading_messages, ...where }) {
      await client.assistant.threads.setStatus({
        ...(await auth()),
        ...where,
        status: quietMarkdown(status),
        ...(loading_messages && { loading_messages: loading_messages.map(quietMarkdown) }),
      });
    },

    async setSuggestedPrompts({ title, prompts, ...where }) {
      await client.assistant.threads.setSuggestedPrompts({
        ...(await auth()),
        ...where,
        ...(title !== undefined && { title: quietMarkdown(title) }),
        prompts: prompts.map((p) => ({
          title: quietMarkdown(p.title),
          message: quietMarkdown(p.message),
        })),
      });
    },

    async setSessionStatus({ title, ...args }) {
      await client.agents.sessions.setStatus({
        ...(await auth()),
        ...args,
        ...(title !== undefined && { title: quietMarkdown(title) }),
      });
    },

    async renameSession({ title, ...where }) {
      await client.agents.sessions.rename({
        ...(await auth()),
        ...where,
        title: quietMarkdown(title),
      });
    },

    async startStream(args) {
      const answer = await client.chat.startStream({ ...(await auth()), ...quietMessage(args) });
      return { ts: parseResponse("chat.startStream", PostedMessage, answer).ts };
    },

    async appendStream(args) {
      await client.chat.appendStream({ ...(await auth()), ...quietMessage(args) });
    },

    async stopStream(args) {
      await client.chat.stopStream({ ...(await auth()), ...quietMessage(args) });
    },
  };
}
