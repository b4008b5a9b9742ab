/**
 * `--say`: one question, non-interactively. The person's message goes to the bot like any
 * other; once the turn has finished, the answer is what the bot's reply messages show.
 */
import { answerText, type ChatItem, statusText, type ViewContext } from "./thread-view.js";
import type { Workspace } from "./workspace.js";

export interface SayResult {
  /** The run completed and its answer is in the reply. */
  ok: boolean;
  /** The Markdown of the reply messages (parts joined by a newline); may be partial. */
  answer: string;
  /** Why it is not ok, in one sentence. */
  problem?: string;
}

export async function say(ws: Workspace, question: string, timeoutMs: number): Promise<SayResult> {
  const started = Date.now();
  const ts = await ws.say(question);
  const threadTs = ws.threadTs ?? ts;
  const replies = (): ChatItem[] =>
    ws.slack.replies(ws.channel, threadTs).map((m) => ({
      kind: "reply",
      ts: m.ts,
      text: m.text,
      ...(m.blocks ? { blocks: m.blocks } : {}),
    }));
  const ctx: ViewContext = { botUserId: ws.slack.botUserId, userId: ws.user };
  let timer: NodeJS.Timeout | undefined;
  try {
    // The placeholder shows the bot took the message up; its turn then runs to the end.
    await ws.slack.waitFor((s) => s.replies(ws.channel, threadTs).length > 0, timeoutMs);
    const left = Math.max(0, timeoutMs - (Date.now() - started));
    await Promise.race([
      ws.idle(),
      new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error("deadline")), left);
      }),
    ]);
  } catch {
    const seconds = timeoutMs / 1000;
    return {
      ok: false,
      answer: answerText(replies(), ctx),
      problem: `no final answer within ${seconds} s (the bot's log says more)`,
    };
  } finally {
    clearTimeout(timer);
  }
  const shown = replies();
  const answer = answerText(shown, ctx);
  const turn = await ws.turnFor(ts);
  if (turn?.outcome === "completed") return { ok: true, answer };
  const last = shown.at(-1);
  // The first status line says how it ended; later ones (the model) are detail.
  const status = last ? (statusText(last, ctx).split("\n")[0] ?? "") : "";
  return {
    ok: false,
    answer,
    problem: status || `the answer ended without completing (${turn?.outcome ?? "no turn"})`,
  };
}
