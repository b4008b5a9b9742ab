import type { ReplyView } from "../../bridge/ports.js";

/**
 * What the thread's status line says for a reply's phase (`assistant.threads.setStatus`):
 * Slack shows "<App name> <status>" and rotates the loading messages in its place. Pure
 * words, no calls; the same vocabulary as the reply's own status line (reply-blocks.ts).
 */
export interface StatusWords {
  /** "" clears the line. */
  status: string;
  /** At most {@link MAX_LOADING_MESSAGES}, each one short line. */
  loading_messages?: string[];
}

/** Slack rotates at most ten loading messages. */
export const MAX_LOADING_MESSAGES = 10;
/** A loading message is one short line; a step's title is cut to this, characters. */
const LINE_MAX = 120;

export const CLEARED: StatusWords = { status: "" };

function line(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= LINE_MAX ? flat : `${flat.slice(0, LINE_MAX - 1)}…`;
}

function queued(ahead: number, where: "thread" | "service"): StatusWords {
  const place = where === "thread" ? "in this thread" : "at the assistant service";
  const position = ahead <= 0 ? "next in line" : `${ahead} ahead`;
  return {
    status: "is waiting for its turn…",
    loading_messages: [`Queued — ${position} ${place}`],
  };
}

/** The steps under way, newest last, as the rotating lines (a tool in use says what it does). */
function stepLines(view: ReplyView): string[] {
  const going = (view.steps ?? []).filter((step) => step.status === "in_progress");
  return going.slice(-(MAX_LOADING_MESSAGES - 1)).map((step) => line(step.title));
}

/**
 * The status line for `view`; `waiting` more questions of the thread wait behind it. Ended
 * phases clear the line: the reply itself says how the answer ended.
 */
export function statusWords(view: ReplyView, waiting = 0): StatusWords {
  const words = phaseWords(view);
  if (words.status === "" || waiting <= 0) return words;
  const more = waiting === 1 ? "1 more question waits" : `${waiting} more questions wait`;
  const lines = [...(words.loading_messages ?? []), `${more} in this thread`];
  return { ...words, loading_messages: lines.slice(-MAX_LOADING_MESSAGES) };
}

function phaseWords(view: ReplyView): StatusWords {
  const { phase } = view;
  switch (phase.kind) {
    case "queued":
      return queued(phase.ahead, phase.where);
    case "starting":
      return {
        status: "is reading the thread…",
        loading_messages: ["Reading the thread…", "Thinking…"],
      };
    case "working": {
      const steps = stepLines(view);
      if (view.body.trim() !== "") {
        return { status: "is writing…", loading_messages: ["Writing the answer…", ...steps] };
      }
      return { status: "is thinking…", loading_messages: ["Thinking…", ...steps] };
    }
    case "retrying":
      return {
        status: "is waiting for the assistant service…",
        loading_messages: [line(phase.note.trim() || "The assistant service is not answering…")],
      };
    default:
      return CLEARED;
  }
}
