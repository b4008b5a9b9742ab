import type { FakeSlack, MessageChange } from "../tools/fake-slack/server.js";
import type { RunningSimulator, RunTextPiece } from "../tools/simulator/server.js";

/**
 * A second, deliberately separate measurement of "first complete word", to check the bench's
 * own figures against: it shares no code with observer.ts, visibility.ts or stats.ts, and
 * reads only what a person and the service would agree on. From the simulator, when each
 * run's first piece of text left and what the run wrote; from the fake Slack's timeline, when
 * the replies in the asking thread first showed the answer's first word whole (its first run
 * of letters or digits) and nothing but the answer's letters and digits from its beginning (a
 * placeholder, a status line or a bare "##" shows none; "Struc" of "Structured" is no word).
 */
export class OutsideView {
  private readonly pieces = new Map<string, RunTextPiece[]>();
  private readonly off: () => void;

  constructor(
    private readonly sim: RunningSimulator,
    private readonly slack: FakeSlack,
  ) {
    const onText = (piece: RunTextPiece) => {
      const list = this.pieces.get(piece.runId) ?? [];
      list.push(piece);
      this.pieces.set(piece.runId, list);
    };
    sim.control.events.on("run-text", onText);
    this.off = () => sim.control.events.off("run-text", onText);
  }

  /**
   * For each run that wrote text: the question it answered (the service message it was
   * started on) and the ms from its first piece to the first reply state showing its first
   * word whole (undefined when none did).
   */
  firstWord(): { question: string; ms: number | undefined }[] {
    const out: { question: string; ms: number | undefined }[] = [];
    for (const [runId, pieces] of this.pieces) {
      const run = this.sim.control.getRun(runId);
      const question = run
        ? this.sim.control.messages(run.threadId).find((m) => m.id === run.triggerMessageId)
        : undefined;
      const start = pieces[0];
      if (!question || !start) continue;
      const text = pieces.map((p) => p.text).join("");
      const shownAt = this.firstShown(question.content, letters(text), firstWordOf(text));
      out.push({
        question: question.content,
        ms: shownAt === undefined ? undefined : shownAt - start.at,
      });
    }
    return out;
  }

  close(): void {
    this.off();
  }

  /**
   * When the bot's replies in the thread whose parent asked `question` first showed the start
   * of `answer` (letters and digits) up to at least the end of its first word, `word`.
   */
  private firstShown(question: string, answer: string, word: string): number | undefined {
    const timeline = this.slack.timeline;
    // The person's message: Slack's text is the service's content with the bot's mention before it.
    const parent = timeline.find(
      (c) => c.kind === "post" && c.bot_id === undefined && c.content.text.endsWith(question),
    );
    if (!parent || answer === "" || word === "") return undefined;
    const showing = new Map<string, string>();
    for (const change of timeline) {
      if (change.thread_ts !== parent.ts || change.channel !== parent.channel) continue;
      if (change.bot_id === undefined) continue;
      if (change.kind === "delete") showing.delete(change.ts);
      else showing.set(change.ts, letters(bodyOf(change)));
      // Only the answer's own words, from its start: "Starting…" is no start of "Structured…".
      const seen = [...showing.values()].join("");
      if (seen.length >= word.length && answer.startsWith(seen)) return change.at;
    }
    return undefined;
  }
}

/** The letters and digits of the first word of `text`: its first run of them. */
function firstWordOf(text: string): string {
  let word = "";
  for (const ch of text) {
    if (/[\p{L}\p{N}]/u.test(ch)) word += ch;
    else if (word !== "") break;
  }
  return word;
}

function letters(text: string): string {
  return [...text].filter((ch) => /[\p{L}\p{N}]/u.test(ch)).join("");
}

/** What of a message is its body: its text, or its blocks less the small print and buttons. */
function bodyOf(change: MessageChange): string {
  const blocks = change.content.blocks;
  if (!blocks || blocks.length === 0) return change.content.text;
  return blocks
    .filter((block) => block.type !== "context" && block.type !== "actions")
    .map((block) => {
      const text = block.text;
      if (typeof text === "string") return text;
      if (typeof text === "object" && text !== null && "text" in text) return String(text.text);
      return "";
    })
    .join("\n");
}
