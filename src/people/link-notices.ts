import type { NotOwnerReason } from "../service/errors.js";
import { notOwnerNote } from "./thread-owner.js";
import type { TokenOwner } from "./token-cipher.js";

export type LinkProblem = "not_linked" | "refused";
/** The person asked in a conversation whose service thread is not theirs to continue. */
export interface NotOwnerProblem {
  reason: NotOwnerReason;
  /** Whose the thread is: a person's Slack id, or "shared". */
  threadOwner: string;
}
/** What a person is told privately once the turn it ended is over. */
export type PersonProblem = LinkProblem | NotOwnerProblem;

/** The private note for a person whose own token could not be used. */
export function linkNote(problem: LinkProblem, help: string): string {
  return problem === "refused"
    ? `The assistant service refused your access token, and again when the bot checked, so it is no longer linked and your question was not answered. Link it again, or a new one, with \`/assistant link\`. ${help}`
    : `To ask the assistant here, link your own access token for the assistant service first: type \`/assistant link\`. ${help}`;
}

/** The private note for any problem a person's turn met (linkNote, or thread-owner.ts). */
export function problemNote(problem: PersonProblem, help: string): string {
  return typeof problem === "string"
    ? linkNote(problem, help)
    : notOwnerNote(problem.reason, problem.threadOwner);
}

/**
 * The link problems met by requests (and conversations that are not the person's to
 * continue), waiting to be told privately to their person once the
 * turn they ended is over (a request knows the person, the turn knows where to tell them).
 * One note per problem, however many of the person's turns it ended.
 */
export class LinkNotices {
  private readonly pending = new Map<string, PersonProblem>();

  add(owner: TokenOwner, problem: PersonProblem): void {
    this.pending.set(keyOf(owner.team, owner.user), problem);
  }

  /** The problem to tell this person now, if any; told once. */
  take(team: string, user: string): PersonProblem | undefined {
    const key = keyOf(team, user);
    const problem = this.pending.get(key);
    this.pending.delete(key);
    return problem;
  }
}

const keyOf = (team: string, user: string) => `${team}\u0000${user}`;
