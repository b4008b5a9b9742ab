import { randomUUID } from "node:crypto";
import type { Bridge } from "../bridge/bridge.js";
import type { ReplyTarget, SharedFilesReader, ThreadHistory } from "../bridge/ports.js";
import type { Allowances } from "../budgets/allowance.js";
import type { Config } from "../config.js";
import { readFiles } from "../files/reader.js";
import type { Logger } from "../logger.js";
import type { Metrics } from "../observability/metrics.js";
import { Admission } from "../slack/admission/admission.js";
import { UserDirectory } from "../slack/admission/user-directory.js";
import { WithAgentSurface } from "../slack/agent/agent-surface.js";
import { NoteGate } from "../slack/calls/note-gate.js";
import { Pacer } from "../slack/calls/pacer.js";
import { PostGate } from "../slack/calls/post-gate.js";
import { CallScheduler } from "../slack/calls/scheduler.js";
import { START, StreamGate } from "../slack/calls/stream-gate.js";
import type { Workspaces } from "../slack/installations/installation.js";
import { SlackThreadHistory } from "../slack/receiving/thread-history.js";
import type { ReplyPayload } from "../slack/render/reply-blocks.js";
import { NativeStream } from "../slack/replies/native-stream.js";
import { PacedEdits } from "../slack/replies/reply.js";
import { ReplyChoice } from "../slack/replies/reply-choice.js";
import { questionMark } from "../slack/web-api/message-mark.js";
import { postOnce } from "../slack/web-api/post-once.js";
import { findMarkedMessage, findUnmarkedReply } from "../slack/web-api/reply-lookup.js";
import type { Clock } from "../time.js";
import { wireAgentSurface } from "./agent-surface.js";

/**
 * The Slack side the bridge writes through: the Web API adapters, one call scheduler with
 * the edit, post and note policies on it, the reply strategy, people and thread history, and
 * who may use the bot.
 */
export interface SlackOptions {
  /** The person stopped a streamed answer with Slack's own control: stop the turn. */
  onStreamStopped?: (target: ReplyTarget) => void;
  /**
   * Where each workspace's Slack budgets are kept (the scheduler's); default this process's
   * memory. Replicas on one PostgreSQL database pass `sharedBudgets(db).allowances`.
   */
  allowances?: Allowances;
}

/**
 * How long a reply's first message (a post or a stream's start) waits for the first words to
 * ride on it, with the agent surface on (its status line says the assistant is working), ms.
 */
const FIRST_WORDS_WAIT_MS = 1_500;
/**
 * Posts that may be ahead of an edited reply's first message in its channel before its run
 * waits for them (PacedEditsOptions.holdRunBeyond): about four seconds at a channel's one new
 * message a second: the answer's message comes with its first seconds written, and the
 * person waits no longer for the rest than for any answer written as they read.
 */
const HOLD_RUN_BEYOND_POSTS = 4;

/** Slack's file host: the one host besides SLACK_API_URL's a file is downloaded from. */
const SLACK_FILE_HOST = "files.slack.com";

export function wireSlack(
  workspaces: Workspaces,
  config: Config,
  clock: Clock,
  metrics: Metrics,
  logger: Logger,
  hooks: SlackOptions = {},
) {
  // Every call goes to the Web API of the workspace it concerns, with that workspace's token.
  const slack = (team: string) => workspaces.slack(team);
  const scheduler = new CallScheduler({
    clock,
    ...(hooks.allowances && { allowances: hooks.allowances }),
  });
  const pacer = new Pacer<ReplyPayload>(
    (target, payload) =>
      slack(target.team).updateMessage({ channel: target.channel, ts: target.ts, ...payload }),
    {
      scheduler,
      updatesPerMinute: config.slack.updatesPerMinute,
      onRateLimited: () => metrics.slackRateLimited.inc({ method: "chat.update" }),
      onSent: (_target, final) => metrics.edits.inc({ kind: final ? "final" : "interim" }),
    },
  );
  const postGate = new PostGate({
    scheduler,
    onRateLimited: () => metrics.slackRateLimited.inc({ method: "chat.postMessage" }),
  });
  const agent = wireAgentSurface(slack, scheduler, metrics, logger);
  const onError = (error: unknown, what: string) =>
    logger.warn({ err: errorText(error), what }, "reply update failed");
  const { streaming } = config.slack;
  const edits = new PacedEdits({
    client: slack,
    pacer,
    postGate,
    findMessage: (where) => findMarkedMessage(slack(where.team), where),
    onError,
    // With Slack's agent surface the status line says the assistant is working, so an edited
    // reply's first message may wait a moment for the first words to ride on it.
    firstWordsWaitMs: streaming.enabled ? FIRST_WORDS_WAIT_MS : 0,
    clock,
    holdRunBeyond: HOLD_RUN_BEYOND_POSTS,
  });
  const native = streaming.enabled
    ? new NativeStream({
        slack,
        gate: new StreamGate({
          scheduler,
          startsPerMinute: streaming.startsPerMinute,
          appendsPerMinute: streaming.appendsPerMinute,
          onRateLimited: (method) => metrics.slackRateLimited.inc({ method }),
        }),
        edits,
        clock,
        firstWordsWaitMs: FIRST_WORDS_WAIT_MS,
        findUnmarked: async (where) => {
          const { botId } = await workspaces.whoAmI(where.team);
          return botId === undefined
            ? undefined
            : findUnmarkedReply(slack(where.team), { ...where, botId });
        },
        ...(hooks.onStreamStopped && { onStoppedByUser: hooks.onStreamStopped }),
        onRefused: (target, reason) => {
          choice.refuse(target, reason);
          logger.warn(
            { team: target.team, channel: target.channel, reason },
            "Slack refused a stream",
          );
        },
        onError,
      })
    : undefined;
  const choice = new ReplyChoice({
    edits,
    native,
    budgets: scheduler,
    starts: {
      perMinute: streaming.startsPerMinute,
      clock,
      // Kept where the scheduler keeps the workspaces' budgets: shared by replicas.
      window: (team) =>
        scheduler.allowance(
          { team, method: START, lane: "chosen" },
          { perMinute: streaming.startsPerMinute, burst: 1, window: true },
        ),
    },
    onChosen: (_target, way) => metrics.replies.inc({ way }),
  });
  // Whichever way an answer is shown, Slack's status line and agent session follow it.
  const replies = new WithAgentSurface(choice, agent);
  const notes = new NoteGate({
    scheduler,
    send: ({ team, threadTs, ...note }) =>
      slack(team).postEphemeral({
        ...note,
        ...(threadTs === undefined ? {} : { thread_ts: threadTs }),
      }),
    onFailed: (note, error) =>
      logger.warn({ err: errorText(error), channel: note.channel }, "could not post a note"),
  });
  /** The shortcut's question, posted once: any retry looks for it by its mark first. */
  const postQuestion = async (
    target: { team: string; channel: string; threadTs: string },
    text: string,
  ): Promise<string> => {
    const { team, channel, threadTs } = target;
    const mark = questionMark(randomUUID());
    const posted = await postOnce(
      { team, channel },
      {
        postGate,
        post: () => slack(team).postMessage({ channel, thread_ts: threadTs, text, metadata: mark }),
        find: () => findMarkedMessage(slack(team), { channel, threadTs, mark }),
        onLookupRefused: (error) =>
          logger.warn({ err: errorText(error) }, "could not look for a posted question"),
      },
    );
    return posted.ts;
  };
  // What Slack says of people, asked with the token of the workspace they are seen in.
  const users = perWorkspace(
    (team) =>
      new UserDirectory({
        lookup: (id) => slack(team).userInfo(id),
        now: () => clock.now(),
      }),
  );
  // Who may ask: ALLOWED_TEAM_IDS, else each workspace's own people (and its org's).
  const admission = perWorkspace(
    (team) =>
      new Admission({
        ...config.trust,
        installation: { whoAmI: () => workspaces.whoAmI(team) },
        people: users(team),
        clock,
        logger,
      }),
  );
  // Each workspace's conversations.replies budget is its own, as Slack counts it.
  const histories = perWorkspace(
    (team) =>
      new SlackThreadHistory({
        client: {
          replies: (args) => slack(team).replies(args),
          whoAmI: () => workspaces.whoAmI(team),
        },
        users: users(team),
        // A thread passes on only what people the bot answers wrote there.
        admission: admission(team),
        clock,
      }),
  );
  const history: ThreadHistory = {
    read: (request, signal) => histories(request.team).read(request, signal),
  };
  // Files go to the assistant as text, downloaded from Slack only, with the workspace's token.
  const fileHosts = [SLACK_FILE_HOST, new URL(config.slack.apiUrl).host];
  const { downloadTimeoutMs, ...fileLimits } = config.files;
  const files: SharedFilesReader = {
    read: (team, shared, signal) =>
      readFiles(
        shared,
        {
          fetch: (url, maxBytes, html, abort) =>
            slack(team).downloadFile(url, {
              allowedHosts: fileHosts,
              maxBytes,
              timeoutMs: downloadTimeoutMs,
              html,
              ...(abort && { signal: abort }),
            }),
          lookUp: (id) => slack(team).fileInfo(id),
        },
        fileLimits,
        signal,
      ),
  };
  return {
    slack,
    scheduler,
    pacer,
    postGate,
    notes,
    replies,
    native,
    postQuestion,
    users,
    installation: workspaces,
    admission,
    history,
    files,
    agent,
  };
}

/** One `T` per workspace, made the first time the workspace needs it. */
function perWorkspace<T>(make: (team: string) => T): (team: string) => T {
  const made = new Map<string, T>();
  return (team) => {
    let value = made.get(team);
    if (value === undefined) {
      value = make(team);
      made.set(team, value);
    }
    return value;
  };
}

export function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/**
 * The asker stopped a streamed answer with Slack's own control: the turn stops as if they
 * pressed Stop. `bridge` is read when it happens (the bridge is wired after Slack).
 */
export function stopOnSlackStop(
  bridge: () => Pick<Bridge, "stop">,
  logger: Logger,
): (target: ReplyTarget) => void {
  return ({ turnId, asker }) => {
    if (asker === undefined) return;
    bridge()
      .stop(turnId, asker)
      .catch((error: unknown) => {
        logger.warn({ turn: turnId, err: errorText(error) }, "could not stop a turn");
      });
  };
}
