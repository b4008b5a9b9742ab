import { z } from "zod";
import type { Bridge } from "../../bridge/bridge.js";
import type { Logger } from "../../logger.js";
import type { Gatekeeping } from "../admission/admission.js";
import type { AgentSessions } from "../agent/agent-session.js";
import type { BoltApp } from "../installations/app.js";
import { STOP_FAILED } from "../surfaces/controls.js";

export interface NativeStopDeps {
  bridge: Pick<Bridge, "stopTurnOf">;
  sessions: Pick<AgentSessions, "settle">;
  installation: Gatekeeping["installation"];
  notes: Gatekeeping["notes"];
  logger: Logger;
}

/** `agent_session_stopped` as far as the bot reads it. */
const SessionStopped = z.object({
  channel: z.string().min(1),
  thread_ts: z.string().min(1),
  user: z.string().min(1),
  /** The app's streams Slack already stopped (empty when none was streaming). */
  streaming_message_ts: z.array(z.string()).optional(),
});

/**
 * Slack's own stop control on an agent's answer (`agent_session_stopped`): it stops the run
 * the way the Stop button does, for the person who asked only, and the reply then says it was
 * stopped. Slack does not move the session out of `processing` itself: the turn's end does
 * (agent-session.ts), or, when nothing of the thread runs here, this listener.
 *
 * No admission check is needed: only turns the presser asked are stopped, and they were
 * admitted when they asked; anyone else learns whose answer it is and changes nothing.
 */
export function registerNativeStop(app: BoltApp, deps: NativeStopDeps): void {
  app.event("agent_session_stopped", async ({ event, context }) => {
    const parsed = SessionStopped.safeParse(event);
    if (!parsed.success) {
      deps.logger.warn({ issues: parsed.error.issues.length }, "dropped a malformed session stop");
      return;
    }
    const { channel, thread_ts: threadTs, user } = parsed.data;
    const team = await deps.installation.workspace(context);
    // The stop may wait for the service; Slack is acknowledged without waiting for it.
    void (async () => {
      const { result, asker } = await deps.bridge.stopTurnOf(team, channel, threadTs, user);
      deps.logger.info({ channel, result }, "Slack's stop control pressed");
      if (result === "not_running") deps.sessions.settle({ team, channel, threadTs });
      const text =
        result === "not_owner"
          ? `Only ${asker ? `<@${asker}>` : "the person who asked"} can stop this answer.`
          : result === "failed"
            ? STOP_FAILED
            : undefined;
      if (text !== undefined) deps.notes.tell({ team, channel, user, threadTs, text });
    })().catch((error: unknown) => {
      deps.logger.warn({ err: String(error) }, "Slack's stop control: could not stop or say why");
    });
  });
}
