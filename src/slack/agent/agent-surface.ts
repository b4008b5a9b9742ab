import type {
  ReplyRecorder,
  ReplyRenderer,
  ReplyStrategy,
  ReplyTarget,
  ReplyView,
} from "../../bridge/ports.js";
import type { AgentSessions } from "./agent-session.js";
import type { SlackThread, StatusLine } from "./status-line.js";

/**
 * A reply strategy decorated with Slack's agent surface: whatever strategy writes the reply
 * (paced edits, a native stream), the thread's status line follows the reply's phases at
 * once, and its agent session is `processing` from the reply's first view to its end. Both
 * spend budgets of their own, never the edits'; the inner strategy is told nothing new.
 */
export class WithAgentSurface implements ReplyStrategy {
  constructor(
    private readonly inner: ReplyStrategy,
    private readonly surface: {
      statusLine: Pick<StatusLine, "show" | "end" | "posted">;
      sessions: Pick<AgentSessions, "begin" | "end">;
    },
  ) {}

  render(target: ReplyTarget, recorder: ReplyRecorder): ReplyRenderer {
    const { statusLine, sessions } = this.surface;
    const { turnId } = target;
    const thread: SlackThread = {
      team: target.team,
      channel: target.channel,
      threadTs: target.threadTs,
    };
    let messages = target.parts.length;
    let begun = false;
    let ended = false;
    const renderer = this.inner.render(target, {
      posting: (part) => recorder.posting(part),
      parts: async (parts) => {
        await recorder.parts(parts);
        // A message the app posts in the thread clears Slack's status line.
        if (parts.length > messages) statusLine.posted(thread, turnId);
        messages = parts.length;
      },
    });
    const track = (view: ReplyView) => {
      if (ended) return;
      if (!begun) {
        begun = true;
        sessions.begin(thread, turnId, target.question);
      }
      statusLine.show(thread, turnId, view);
    };
    return {
      open: (view) => {
        track(view);
        return renderer.open(view);
      },
      show: (view) => {
        track(view);
        renderer.show(view);
      },
      finish: async (view) => {
        try {
          await renderer.finish(view);
        } finally {
          // Once Slack shows the ending (or will not): the line and the session rest.
          ended = true;
          statusLine.end(thread, turnId);
          if (begun) sessions.end(thread, turnId);
        }
      },
      near: () => renderer.near?.() ?? Promise.resolve(),
    };
  }
}
