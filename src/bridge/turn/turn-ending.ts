import type { TurnOutcome } from "../../store/turn.js";
import type { ReplyPhase, Run } from "../ports.js";
import { RunAbandoned } from "./relay.js";
import { RunStartUnknown } from "./run-start.js";
import { isTransient, serviceFailureKind } from "./service-failure.js";

/**
 * How a turn ends, as pure functions: from the run (or the error, or the refused message)
 * to what the reply shows and the outcome recorded. Every sentence a person may read
 * about a failure is written here, in one place.
 */

export interface Ending {
  phase: ReplyPhase;
  /** The answer's Markdown the reply ends with. */
  body: string;
  outcome: TurnOutcome;
}

export const STILL_TRYING =
  "The assistant service is not answering right now; the bot keeps trying…";
const UNREACHABLE =
  "The assistant service could not be reached, so this message was not answered. Please try again in a few minutes.";
/** Said when a run start may or may not have started a run (run-start.ts: never sent twice). */
export const START_UNCONFIRMED =
  "Your answer may not have started: the assistant service did not confirm it, and the bot does not ask twice in case it did. To ask again, send your question again in this thread.";
const GARBAGE = "The assistant service sent an answer the bot could not read. Please try again.";

/**
 * The ending of a run that reached an end status. The body is the run's own output
 * (`GET /v1/run/{id}`), falling back to what was shown only for a stopped run without one.
 */
export function runEnding(
  run: Run,
  context: {
    shown: string;
    stoppedBy: string | undefined;
    timedOut: boolean;
    runTimeoutMs: number;
  },
): Ending {
  const answer = run.output?.[0]?.text ?? undefined;
  const model = run.modelUsed ? { modelUsed: run.modelUsed } : {};
  switch (run.status) {
    case "completed":
      return { phase: { kind: "completed", ...model }, body: answer ?? "", outcome: "completed" };
    case "failed":
      return {
        phase: {
          kind: "failed",
          error: run.error?.trim() || "the assistant reported an error",
          ...model,
        },
        body: answer ?? "",
        outcome: "failed",
      };
    default: {
      const body = answer ?? context.shown;
      if (context.timedOut) {
        const message = timeoutMessage(context.runTimeoutMs);
        return { phase: { kind: "unreachable", message }, body, outcome: "error" };
      }
      const by = context.stoppedBy ? { by: context.stoppedBy } : {};
      return { phase: { kind: "stopped", ...by, ...model }, body, outcome: "stopped" };
    }
  }
}

/** A turn stopped before its run existed: nothing was answered. */
export function stoppedEnding(stoppedBy: string | undefined): Ending {
  const by = stoppedBy ? { by: stoppedBy } : {};
  return { phase: { kind: "stopped", ...by }, body: "", outcome: "stopped" };
}

export function timeoutMessage(runTimeoutMs: number): string {
  const minutes = Math.round(runTimeoutMs / 60_000);
  const limit = minutes > 0 ? `${minutes} minute${minutes === 1 ? "" : "s"}` : "the time limit";
  return `The assistant did not finish within ${limit}, so the run was stopped.`;
}

/**
 * A message that is not passed on at all: too long, or nothing but the mention (and no file,
 * which would be what is asked about).
 */
export function refusal(
  content: string,
  maxMessageChars: number,
  hasFiles = false,
): Ending | undefined {
  if (content.length > maxMessageChars) {
    const length = content.length.toLocaleString("en-US");
    const limit = maxMessageChars.toLocaleString("en-US");
    return {
      outcome: "error",
      body: "",
      phase: {
        kind: "unreachable",
        message: `Your message is ${length} characters long; the limit is ${limit}. Please shorten it and ask again.`,
      },
    };
  }
  if (content.trim() === "" && !hasFiles) {
    return {
      outcome: "error",
      body: "",
      phase: {
        kind: "unreachable",
        message:
          "There was no question to pass on. Mention me with a question, for example “@assistant summarize this thread”.",
      },
    };
  }
  return undefined;
}

/** Said in the thread when the asker's own token could not be used (they are also told privately). */
export const PERSONAL_TOKEN = {
  refused:
    "The assistant service refused your own access token, and again when the bot checked, so this message was not answered and your token is no longer linked. Link it again, or a new one, with `/assistant link`.",
  refused_kept:
    "The assistant service refused your own access token just now, so this message was not answered. Your token is still linked: the bot could not confirm the refusal (the service may be refusing everyone for a while). Please try again in a few minutes.",
  not_linked:
    "This message was not answered: your own access token for the assistant service is needed, and none is linked. Link one with `/assistant link`.",
} as const;

/** The service port's PersonalTokenError, read by its fields (the bridge imports no client). */
function personalProblem(error: unknown): keyof typeof PERSONAL_TOKEN | undefined {
  if (serviceFailureKind(error) !== "authentication") return undefined;
  const { personal, reason } = error as { personal?: unknown; reason?: unknown };
  if (personal !== true) return undefined;
  return typeof reason === "string" && Object.hasOwn(PERSONAL_TOKEN, reason)
    ? (reason as keyof typeof PERSONAL_TOKEN)
    : undefined;
}

/**
 * Said in the thread when the conversation's service thread is not the asker's to continue:
 * nothing was sent (the service keeps a thread for the token that created it). The asker is
 * also told privately whose it is.
 */
export const NOT_OWNER = {
  another_person:
    "This message was not answered: this conversation belongs to another person's account at the assistant service, and only they can continue it. Start a new thread or send me a direct message to ask in a conversation of your own.",
  owner_unlinked:
    "This message was not answered: this conversation was started with your own access token, which is no longer linked. Link it again with `/assistant link` to continue here, or start a new thread.",
  shared_unused:
    "This message was not answered: this conversation was started with the bot's shared access to the assistant service, which is no longer used here. Start a new thread to ask with your own access token.",
} as const;

/** The service port's ThreadOwnerError, read by its fields (the bridge imports no client). */
function ownerProblem(error: unknown): keyof typeof NOT_OWNER | undefined {
  if (serviceFailureKind(error) !== "authentication") return undefined;
  const { threadOwner, reason } = error as { threadOwner?: unknown; reason?: unknown };
  if (typeof threadOwner !== "string") return undefined;
  return typeof reason === "string" && Object.hasOwn(NOT_OWNER, reason)
    ? (reason as keyof typeof NOT_OWNER)
    : undefined;
}

/** One sentence for a person about why their answer could not be had. */
export function describeFailure(error: unknown): string {
  if (error instanceof RunAbandoned) return "The answer was abandoned.";
  if (error instanceof RunStartUnknown) return START_UNCONFIRMED;
  const personal = personalProblem(error);
  if (personal !== undefined) return PERSONAL_TOKEN[personal];
  const notOwner = ownerProblem(error);
  if (notOwner !== undefined) return NOT_OWNER[notOwner];
  switch (serviceFailureKind(error)) {
    case "rate_limited":
      return "The assistant service is over its request limit right now. Please try again in a minute.";
    case "protocol":
      return GARBAGE;
    case "authentication":
      return "The bot's credentials for the assistant service were refused. Please tell the person who runs this bot.";
    case "not_found":
      return "The assistant service no longer knows this conversation or assistant. Start a new thread to continue.";
    case "bad_request":
      // Which call and what the service said are for the log (errorSummary), not the channel.
      return "The assistant service refused this request, so this message was not answered; the bot's log says why.";
    default:
      if (isTransient(error)) return UNREACHABLE;
      return "Something went wrong while answering. Please try again.";
  }
}
