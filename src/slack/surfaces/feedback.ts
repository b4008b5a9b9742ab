import { z } from "zod";
import type { Logger } from "../../logger.js";
import type { FeedbackStore, FeedbackValue, TurnStore } from "../../store/stores.js";
import { type Gatekeeping, REFUSAL_NOTES } from "../admission/admission.js";
import type { BoltApp } from "../installations/app.js";
import { FEEDBACK_ACTION_ID, readFeedbackValue } from "../render/feedback-block.js";

export interface FeedbackDeps extends Gatekeeping {
  turns: Pick<TurnStore, "byId">;
  feedback: Pick<FeedbackStore, "record">;
  logger: Pick<Logger, "info" | "warn">;
  /** A press was recorded (metrics). */
  onRecorded?: (value: FeedbackValue) => void;
}

/** The thank-you only the presser sees, in the answer's thread. */
export const FEEDBACK_THANKS: Readonly<Record<FeedbackValue, string>> = {
  positive: "Thanks for the feedback: glad this answer helped.",
  negative: "Thanks for the feedback: noted that this answer did not help.",
};

/** What the bot reads of a press: who pressed, from which organisation, in which channel. */
const Press = z.object({
  user: z.object({ id: z.string().min(1), team_id: z.string().optional() }),
  team: z.object({ id: z.string(), enterprise_id: z.string().optional() }).nullish(),
  channel: z.object({ id: z.string().min(1) }),
});

/**
 * A press of the feedback buttons under a completed answer (feedback-block.ts). It is
 * acknowledged at once; then, for a person the admission rule lets in, it is recorded on the
 * turn as theirs (a later press of theirs replaces it), counted, and thanked with a note only
 * they see. Nothing visible changes: Slack itself shows which button is pressed.
 *
 * A press is refused, recording nothing, when the person may not use the bot (they get the
 * refusal note), and when its value names no completed turn of the channel it was pressed in:
 * the buttons exist only there, so anything else is a forged or made-up payload, which is
 * neither recorded nor answered.
 */
export function registerFeedback(app: BoltApp, deps: FeedbackDeps): void {
  app.action(FEEDBACK_ACTION_ID, async ({ ack, body, action, context }) => {
    await ack();
    const press = Press.safeParse(body);
    const pressed = readFeedbackValue((action as { value?: unknown }).value);
    if (!press.success || pressed === undefined) {
      deps.logger.warn({}, "feedback press without a channel or a value of ours: ignored");
      return;
    }
    const { user, team: org, channel } = press.data;
    // The admission check may ask users.info: Slack has its acknowledgement already.
    void (async () => {
      const team = await deps.installation.workspace(context);
      const refusal = await deps.admission(team).check({
        user: user.id,
        team: user.team_id ?? org?.id,
        enterprise: org?.enterprise_id,
      });
      const where = { team, channel: channel.id, user: user.id };
      if (refusal !== undefined) {
        deps.notes.tell({ ...where, text: REFUSAL_NOTES[refusal] });
        return;
      }
      const turn = await deps.turns.byId(pressed.turnId);
      const judged =
        turn !== undefined &&
        turn.team === team &&
        turn.channel === channel.id &&
        turn.state === "finished" &&
        turn.outcome === "completed";
      if (!judged) {
        deps.logger.info({ channel: channel.id }, "feedback press names no answer here: ignored");
        return;
      }
      // A finished turn never changes again: what was read above still holds.
      await deps.feedback.record(turn.id, user.id, pressed.value);
      deps.onRecorded?.(pressed.value);
      deps.logger.info({ turn: turn.id, value: pressed.value }, "feedback recorded");
      deps.notes.tell({ ...where, threadTs: turn.threadTs, text: FEEDBACK_THANKS[pressed.value] });
    })().catch((error: unknown) => {
      deps.logger.warn({ err: String(error) }, "feedback press: could not record it");
    });
  });
}
