import type { Turn } from "../../store/turn.js";
import type { StepContext } from "./turn-step.js";

/**
 * The step before the run starts: unless the run exists already, it waits for the reply's
 * first message to come near (TurnReply.near). Where many answers wait for a channel's one
 * new message a second, the service then writes each answer while its message comes, rather
 * than long before anyone can read it. A stop or a leave ends the wait (the turn's waits);
 * the runner then sees why between steps.
 */
export async function replyNear(turn: Turn, context: StepContext): Promise<Turn> {
  if (turn.runId) return turn;
  const waits = context.life.waits;
  if (waits.aborted) return turn;
  let stopWaiting: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => {
    stopWaiting = () => resolve();
    waits.addEventListener("abort", stopWaiting, { once: true });
  });
  try {
    await Promise.race([context.life.reply.near(), stopped]);
  } finally {
    waits.removeEventListener("abort", stopWaiting);
  }
  return turn;
}
