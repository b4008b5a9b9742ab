/**
 * The terminal chat: each line the person types is posted in the sandbox thread (or runs a
 * command), and the thread is shown as Slack shows it, the reply being written updating in
 * place. Entries settle (scroll up for good) once every answer in flight has finished.
 */
import { createInterface } from "node:readline";
import type { Turn } from "../src/store/turn.js";
import { tsToMicros } from "../tools/fake-slack/messages.js";
import { nextTs } from "../tools/slack-requests.js";
import { layout } from "./layout.js";
import { type ReplicaView, SANDBOX_LEASE_SECONDS } from "./replica-bots.js";
import { type ChatScreen, PlainScreen, type TerminalOutput, TerminalScreen } from "./screen.js";
import { type ChatItem, paragraphOf, stopTurnOf, type ViewContext } from "./thread-view.js";
import type { Workspace } from "./workspace.js";

export interface ChatOptions {
  workspace: Workspace;
  input: NodeJS.ReadableStream;
  output: TerminalOutput;
  /** A terminal gets live redraws, colours and the banner; otherwise settled entries only. */
  terminal: boolean;
  /** Rows shown first (terminal only). */
  banner?: string[];
  /** How often the screen looks for changes in the thread, ms. Default 50. */
  frameMs?: number;
  /** A message the bot never took up counts as settled after this long, ms. Default 10 000. */
  unansweredMs?: number;
  /** Aborting leaves the chat, as /quit does. */
  signal?: AbortSignal;
  now?: () => number;
}

export const CHAT_HELP = [
  "Type a message to ask the assistant; the first one starts a thread, later ones continue it.",
  "/assistant help     the bot's slash command (stop, status, model, effort, steps)",
  "/stop               press the [Stop] button of the reply being written",
  "/quit or Ctrl-D     leave; stops everything the sandbox started",
];

/** How long after a turn finished the chat says who answered it: logs arrive by pipe. */
const ATTRIBUTION_DELAY_MS = 300;

/** More help with --replicas. */
export const REPLICA_HELP = [
  "/replicas           which replicas are alive, and the leases (conversations) each holds",
  "/kill <n>           SIGKILL replica n; another takes its answers over once its leases expire",
];

/** The chat's help for this workspace. */
export const helpFor = (ws: Workspace): string[] =>
  ws.replicas ? [...CHAT_HELP, ...REPLICA_HELP] : CHAT_HELP;

const keyOf = (item: ChatItem) =>
  `${item.kind === "person" || item.kind === "reply" ? "m" : "n"}:${item.ts}`;

const byTs = (a: ChatItem, b: ChatItem) => {
  const diff = tsToMicros(a.ts) - tsToMicros(b.ts);
  return diff < 0n ? -1 : diff > 0n ? 1 : 0;
};

/** Runs the chat until the person leaves (/quit, Ctrl-D, end of input, or `signal`). */
export function runChat(options: ChatOptions): Promise<void> {
  const { workspace: ws, terminal } = options;
  const now = options.now ?? Date.now;
  const ctx: ViewContext = { botUserId: ws.slack.botUserId, userId: ws.user };
  const rl = createInterface({
    input: options.input,
    output: options.output,
    terminal,
    prompt: terminal ? "\x1b[1;36myou>\x1b[0m " : "",
  });
  const screen: ChatScreen = terminal
    ? new TerminalScreen(options.output, rl)
    : new PlainScreen(options.output);

  const notes: ChatItem[] = [];
  const committed = new Set<string>();
  const acknowledged = new Map<string, number>();
  let seenResponses = 0;
  let seenEphemerals = 0;
  let sending = 0;
  let drawn = "";
  let inputEnded = false;
  let left = false;
  let done: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => {
    done = resolve;
  });

  const note = (kind: "ephemeral" | "command", text: string): void => {
    notes.push({ kind, ts: nextTs(), text });
  };
  const sandboxNote = (text: string, error = false): void => {
    notes.push({ kind: "sandbox", ts: nextTs(), text, error });
  };

  /** Messages whose answering replica the chat has told; see replicaNotes. */
  const attributed = new Set<string>();
  /** When each message's turn was first seen finished (the log line of a takeover may lag). */
  const finishedAt = new Map<string, number>();
  /**
   * Each message's turn as last read, and (with replicas) who answered a finished one: the
   * store answers asynchronously, so each frame starts a read and draws what the last one saw.
   */
  const turnsRead = new Map<string, Turn>();
  const answeredRead = new Map<string, number[]>();
  let reading = false;
  const readTurns = async () => {
    if (reading) return;
    reading = true;
    try {
      for (const ts of acknowledged.keys()) {
        const turn = await ws.turnFor(ts);
        if (turn) turnsRead.set(ts, turn);
        if (ws.replicas && turn?.state === "finished") {
          answeredRead.set(ts, await ws.replicas.answeredBy(ts));
        }
      }
    } catch {
      // The next frame reads again (a replica's database may be between connections).
    } finally {
      reading = false;
    }
  };
  /** With replicas: once a message's turn has finished, which replica(s) answered it. */
  const replicaNotes = () => {
    const view = ws.replicas;
    if (!view) return;
    for (const ts of acknowledged.keys()) {
      if (attributed.has(ts) || turnsRead.get(ts)?.state !== "finished") continue;
      const at = finishedAt.get(ts) ?? now();
      finishedAt.set(ts, at);
      const seen = answeredRead.get(ts);
      if (now() - at < ATTRIBUTION_DELAY_MS || seen === undefined) continue;
      attributed.add(ts);
      const received = view.receivedBy(ts);
      if (seen.length > 1) {
        sandboxNote(`Answered by ${seen.map((n) => `replica ${n}`).join(" → ")} (taken over).`);
      } else if (seen.length === 1) sandboxNote(`Answered by replica ${seen[0]}.`);
      else if (received !== undefined) sandboxNote(`Answered (replica ${received} received it).`);
    }
  };

  const items = (): ChatItem[] => {
    replicaNotes();
    // Answers that reach the person later: `respond()` posts and chat.postEphemeral.
    for (const response of ws.slack.responses.slice(seenResponses)) {
      const text = (response.body as { text?: unknown } | undefined)?.text;
      if (typeof text === "string") note("ephemeral", text);
    }
    seenResponses = ws.slack.responses.length;
    for (const ephemeral of ws.slack.ephemerals.slice(seenEphemerals)) {
      const text = (ephemeral as { text?: unknown }).text;
      if (typeof text === "string") note("ephemeral", text);
    }
    seenEphemerals = ws.slack.ephemerals.length;
    const thread: ChatItem[] = [];
    const root = ws.threadTs;
    if (root !== undefined) {
      for (const m of ws.slack.messages(ws.channel)) {
        if (m.ts !== root && m.thread_ts !== root) continue;
        thread.push(
          m.bot_id === ws.slack.botId
            ? { kind: "reply", ts: m.ts, text: m.text, ...(m.blocks ? { blocks: m.blocks } : {}) }
            : { kind: "person", ts: m.ts, text: m.text },
        );
      }
    }
    return [...thread, ...notes].sort(byTs);
  };

  const answered = (item: ChatItem): boolean => {
    if (item.kind !== "person") return true;
    const turn = turnsRead.get(item.ts);
    // With replicas, the note of who answered comes with the answer.
    if (turn) return turn.state === "finished" && (!ws.replicas || attributed.has(item.ts));
    const at = acknowledged.get(item.ts);
    return at !== undefined && now() - at >= (options.unansweredMs ?? 10_000);
  };

  const rows = (list: ChatItem[], color: boolean) =>
    layout(
      list.map((item) => paragraphOf(item, ctx)),
      screen.columns,
      color,
    );

  const settle = (live: ChatItem[]) => {
    screen.commit(rows(live, terminal));
    for (const item of live) committed.add(keyOf(item));
    drawn = "";
  };

  const frame = () => {
    if (left) return;
    void readTurns();
    const live = items().filter((item) => !committed.has(keyOf(item)));
    const busy = sending > 0 || live.some((item) => stopTurnOf(item) !== undefined);
    if (live.length > 0 && !busy && live.every(answered)) {
      settle(live);
      return;
    }
    if (inputEnded && live.length === 0 && sending === 0) {
      leave();
      return;
    }
    if (!terminal) return;
    const shown = rows(live, true);
    const signature = `${screen.columns}\n${shown.join("\n")}`;
    if (signature === drawn) return;
    drawn = signature;
    screen.draw(shown);
  };
  const timer = setInterval(frame, options.frameMs ?? 50);

  const leave = () => {
    if (left) return;
    // The last state of anything still in flight stays on screen.
    const live = items().filter((item) => !committed.has(keyOf(item)));
    if (live.length > 0) settle(live);
    left = true;
    clearInterval(timer);
    screen.close();
    rl.close();
    done();
  };

  const send = async (work: () => Promise<void>) => {
    sending += 1;
    try {
      await work();
    } catch (error) {
      sandboxNote(`That did not reach the bot: ${(error as Error).message}`, true);
    } finally {
      sending -= 1;
    }
  };

  const handle = async (text: string): Promise<void> => {
    if (text === "" || left) return;
    if (text === "/help") {
      for (const line of helpFor(ws)) sandboxNote(line);
      return;
    }
    const replicaCommand = /^\/(kill|replicas)\b\s*(.*)$/.exec(text);
    if (replicaCommand && ws.replicas) {
      const [, name, rest] = replicaCommand;
      return send(() => (name === "kill" ? kill(ws.replicas, rest ?? "") : replicas(ws.replicas)));
    }
    if (text === "/stop") {
      const live = items().filter((item) => !committed.has(keyOf(item)));
      const reply = live.findLast((item) => stopTurnOf(item) !== undefined);
      const turnId = reply && stopTurnOf(reply);
      if (!reply || !turnId) return sandboxNote("No reply has a Stop button right now.");
      return send(() => ws.pressStop(turnId, reply.ts));
    }
    const command = /^\/assistant(?:\s+([\s\S]*))?$/.exec(text);
    if (command) {
      note("command", text);
      return send(async () => {
        const ack = await ws.command(command[1] ?? "");
        if (ack !== undefined) note("ephemeral", ack);
      });
    }
    if (text.startsWith("/")) {
      const name = text.split(/\s/)[0];
      const more = ws.replicas ? ", /replicas, /kill <n>" : "";
      return sandboxNote(
        `${name} is not a command here: try /assistant help, /stop${more} or /quit.`,
      );
    }
    return send(async () => {
      const ts = await ws.say(text);
      acknowledged.set(ts, now());
      const received = ws.replicas?.receivedBy(ts);
      if (received !== undefined) sandboxNote(`Replica ${received} received this message.`);
    });
  };

  const kill = async (view: ReplicaView | undefined, which: string) => {
    const n = Number(which.trim());
    if (!view || !Number.isInteger(n) || !(await view.kill(n))) {
      const alive = view?.list.filter((r) => r.alive()).map((r) => r.number) ?? [];
      return sandboxNote(`/kill takes the number of a live replica: ${alive.join(", ")}.`, true);
    }
    sandboxNote(
      `Killed replica ${n} (SIGKILL). Its conversations go to another replica once their leases expire (${SANDBOX_LEASE_SECONDS} s).`,
    );
  };

  const replicas = async (view: ReplicaView | undefined) => {
    if (!view) return;
    const leases = await view.leases();
    for (const replica of view.list) {
      const held = leases.get(replica.number) ?? 0;
      const state = replica.alive() ? "alive" : "killed";
      sandboxNote(
        `replica ${replica.number} (pid ${replica.pid}): ${state}, ${held} lease${held === 1 ? "" : "s"}`,
      );
    }
  };

  // Lines are handled in order, each once the bot has acknowledged the one before (as a
  // person types after seeing the last answer); leaving does not wait its turn.
  let handled = Promise.resolve();
  rl.on("line", (line) => {
    if (left) return;
    screen.entered(line);
    drawn = "";
    const text = line.trim();
    if (text === "/quit" || text === "/exit") leave();
    else handled = handled.then(() => handle(text)).finally(frame);
    frame();
  });
  rl.on("SIGINT", leave);
  rl.on("close", () => {
    inputEnded = true;
    if (terminal) leave();
  });
  options.signal?.addEventListener("abort", leave, { once: true });
  if (options.signal?.aborted) leave();

  if (terminal) screen.commit(options.banner ?? []);
  if (!left) frame();
  return finished;
}
