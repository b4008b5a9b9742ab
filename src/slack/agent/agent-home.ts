import { z } from "zod";
import type { Logger } from "../../logger.js";
import type { Gatekeeping } from "../admission/admission.js";
import type { ThreadSignals } from "../calls/thread-signals.js";
import type { BoltApp } from "../installations/app.js";
import type { RequestPlace } from "../installations/installation.js";
import type { SuggestedPrompt, SuggestedPromptsArgs } from "../web-api/web-api.js";

/** The prompts offered to a new conversation; none when `prompts` is empty. */
export interface PromptOffer {
  /** Shown above them. */
  title: string;
  /** At most four. */
  prompts: readonly SuggestedPrompt[];
}

export interface AgentHomeDeps {
  offer: PromptOffer;
  /** `assistant.threads.setSuggestedPrompts`, paced, once per channel while Slack shows them. */
  prompts: Pick<ThreadSignals<SuggestedPromptsArgs>, "set">;
  installation: Gatekeeping["installation"];
  logger: Logger;
}

const MessagesTabOpened = z.object({ channel: z.string().min(1), tab: z.string().optional() });
const ThreadStarted = z.object({
  assistant_thread: z.object({ channel_id: z.string().min(1) }),
});

/**
 * The app's own space in Slack (its Messages tab, the agent view): a person who opens it to
 * start a conversation is offered the configured prompts. The manifest declares the agent
 * view, where `thread_ts` must be left out of the call (Slack then sets them for the
 * conversation being started, and ignores a call that names a thread). The same offer
 * follows `assistant_thread_started`, which a workspace still on the assistant view sends.
 * Reopening the tab within the policy's memory costs no call: the prompts are already shown.
 */
export function registerAgentHome(app: BoltApp, deps: AgentHomeDeps): void {
  const offer = async (channel: string, place: RequestPlace) => {
    if (deps.offer.prompts.length === 0) return;
    const team = await deps.installation.workspace(place);
    // Not awaited: the call is paced, and the acknowledgement must not wait for it.
    void deps.prompts
      .set(team, channel, {
        channel_id: channel,
        title: deps.offer.title,
        prompts: [...deps.offer.prompts],
      })
      .then((landed) => {
        if (!landed) deps.logger.debug({ channel }, "suggested prompts not set");
      });
  };

  app.event("app_home_opened", async ({ event, context }) => {
    const parsed = MessagesTabOpened.safeParse(event);
    // The Home tab is app-home.ts's.
    if (parsed.success && parsed.data.tab === "messages") {
      await offer(parsed.data.channel, context);
    }
  });
  app.event("assistant_thread_started", async ({ event, context }) => {
    const parsed = ThreadStarted.safeParse(event);
    if (parsed.success) await offer(parsed.data.assistant_thread.channel_id, context);
  });
  // Answers do not depend on the channel a person is looking at, so moving between channels
  // changes nothing; the event is subscribed (the agent view sends it) and acknowledged.
  app.event("app_context_changed", async () => {});
}
