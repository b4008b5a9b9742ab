import type { Logger } from "../logger.js";
import type { Metrics } from "../observability/metrics.js";
import { AgentSessions } from "../slack/agent/agent-session.js";
import { StatusLine } from "../slack/agent/status-line.js";
import type { CallScheduler } from "../slack/calls/scheduler.js";
import { ThreadSignals } from "../slack/calls/thread-signals.js";
import type {
  SessionStatusArgs,
  SlackWebApi,
  SuggestedPromptsArgs,
  ThreadStatusArgs,
} from "../slack/web-api/web-api.js";

/**
 * Slack refreshes nothing: a status line not set again within about two minutes disappears,
 * so one still wanted is sent again after this long, ms.
 */
const STATUS_REFRESH_MS = 100_000;

/*
 * Budgets per workspace: each method's calls in any minute (a window: a burst of questions has
 * its statuses at once), a little under Slack's limit. setStatus has "special" limits, taken
 * as Tier 3 (50/min) until Slack says more (slack-facts.md); agents.sessions.* are assumed
 * Tier 3 (unconfirmed); setSuggestedPrompts is Tier 4.
 */
const BUDGETS = {
  status: { perMinute: 47, burst: 1, window: true },
  session: { perMinute: 47, burst: 1, window: true },
  rename: { perMinute: 47, burst: 1, window: true },
  prompts: { perMinute: 95, burst: 1, window: true },
};

/**
 * Slack's agent surface over the call scheduler: the thread status line, the agent session
 * (its state and title) and the Messages tab's suggested prompts, each a ThreadSignals policy
 * with a budget of its own, so none of them costs an edit.
 */
export function wireAgentSurface(
  slack: (team: string) => SlackWebApi,
  scheduler: CallScheduler,
  metrics: Metrics,
  logger: Logger,
) {
  const signals = <P>(
    method: string,
    budget: { perMinute: number; burst: number; window: boolean },
    send: (payload: P, team: string) => Promise<unknown>,
    more: { refreshMs?: (payload: P) => number | undefined; retentionMs?: number } = {},
  ) =>
    new ThreadSignals<P>({
      scheduler,
      method,
      send,
      ...budget,
      ...more,
      onRateLimited: () => metrics.slackRateLimited.inc({ method }),
      onFailed: (error, _payload, workspaceWide) =>
        logger.warn(
          { method, err: error instanceof Error ? error.message : String(error) },
          workspaceWide
            ? "Slack refused the call for this workspace; the bot stops making it there"
            : "Slack did not take the call",
        ),
    });

  const statuses = signals<ThreadStatusArgs>(
    "assistant.threads.setStatus",
    BUDGETS.status,
    (args, team) => slack(team).setThreadStatus(args),
    { refreshMs: (args) => (args.status === "" ? undefined : STATUS_REFRESH_MS) },
  );
  const sessionStates = signals<SessionStatusArgs>(
    "agents.sessions.setStatus",
    BUDGETS.session,
    (args, team) => slack(team).setSessionStatus(args),
  );
  const sessionTitles = signals<{ channel_id: string; thread_ts: string; title: string }>(
    "agents.sessions.rename",
    BUDGETS.rename,
    (args, team) => slack(team).renameSession(args),
  );
  // Kept a minute: reopening the tab at once costs nothing, a new conversation later is offered them again.
  const prompts = signals<SuggestedPromptsArgs>(
    "assistant.threads.setSuggestedPrompts",
    BUDGETS.prompts,
    (args, team) => slack(team).setSuggestedPrompts(args),
    { retentionMs: 60_000 },
  );
  return {
    statusLine: new StatusLine(statuses),
    sessions: new AgentSessions(sessionStates, sessionTitles),
    prompts,
  };
}
