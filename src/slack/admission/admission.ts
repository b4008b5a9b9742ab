import { type Clock, settleWithin } from "../../time.js";
import type { NoteGate } from "../calls/note-gate.js";
import type { Workspaces } from "../installations/installation.js";
import type { UserDirectory } from "./user-directory.js";

/**
 * Why a person is not answered: from an organisation not allowed (`outsider`), a guest
 * account where guests are not allowed (`guest`), or not checkable because Slack did not
 * answer users.info in time (`unchecked`).
 */
export type Refusal = "outsider" | "guest" | "unchecked";

/** The note only the refused person sees; nothing else of theirs reaches Slack or the service. */
export const REFUSAL_NOTES: Readonly<Record<Refusal, string>> = {
  outsider:
    "Sorry, I only answer people of this workspace, so your message was not passed on to the assistant.",
  guest:
    "Sorry, I don't answer guest accounts here, so your message was not passed on to the assistant.",
  unchecked:
    "I couldn't check your Slack account just now, so your message was not passed on to the assistant. Please try again in a minute.",
};

/** Who wrote a message or pressed a button, as the payload tells it. */
export interface Author {
  user: string;
  /**
   * The person's organisation as the payload names it (an event's `user_team`, a command's
   * `team_id`); undefined when it names none (users.info then decides).
   */
  team: string | undefined;
  /** Their Enterprise org, when the payload names one (slash commands and actions do). */
  enterprise?: string | undefined;
  /**
   * The payload alone does not prove the person's organisation (an event in a channel shared
   * with other organisations that carries no `user_team`): users.info must confirm it.
   */
  confirm?: boolean;
  /**
   * An integration's message (an app posting without a user, as in a thread's history):
   * nobody to look up and no guest account, so the organisation it names decides alone.
   */
  app?: boolean;
}

/** What every Slack entry point needs to apply the rule: keys, the rule, the refusal note. */
export interface Gatekeeping {
  /** The workspace of each request: every key uses it, whatever team the payload names. */
  installation: Pick<Workspaces, "workspace">;
  /**
   * Who may use the bot in a workspace: the same rule for messages, commands, buttons and
   * the shortcut.
   */
  admission: (team: string) => Pick<Admission, "check">;
  /** Notes only the person sees (a refusal, too many waiting, a Stop not theirs), paced. */
  notes: Pick<NoteGate, "tell">;
}

export interface AdmissionOptions {
  /** Workspace and org ids whose people are answered; undefined: the installation's own (auth.test). */
  allowedTeamIds: readonly string[] | undefined;
  /** Whether restricted and ultra-restricted accounts are answered. */
  allowGuests: boolean;
  /** Who the bot is in the workspace whose requests this rule decides (auth.test). */
  installation: { whoAmI(): ReturnType<Workspaces["whoAmI"]> };
  people: Pick<UserDirectory, "resolve" | "person">;
  clock: Clock;
  /** Where a setting that leaves out the bot's own workspace is reported. */
  logger: { warn(fields: Record<string, unknown>, message: string): void };
  /**
   * Longest wait for users.info before deciding without it, ms; default 1_000. Slack's
   * acknowledgement waits for the listener, so this stays well under its 3 s.
   */
  lookupWaitMs?: number;
}

/**
 * The rule of who may use the bot (contract: Trust): people of the allowed workspaces and
 * orgs, and guests only when allowed. Decided at the Slack edge before anything is written
 * or sent to the service.
 *
 * users.info is asked only when the payload is not enough: the person's team is not in the
 * list (are they in an allowed Enterprise org?), it needs confirming, or guests are refused.
 * When it gives no answer in time the decision fails closed: a payload naming another
 * organisation stays refused (nothing says otherwise), and a guest check that cannot be made
 * refuses with a note asking to try again. Answering unchecked would quietly break the
 * operator's `ALLOW_GUESTS=false`, while a member refused by a users.info outage only has to
 * ask again a minute later, and is told so.
 */
export class Admission {
  private allowedIds: Promise<ReadonlySet<string>> | undefined;

  constructor(private readonly options: AdmissionOptions) {}

  /** Undefined when the person may be answered; otherwise why not. */
  async check(author: Author): Promise<Refusal | undefined> {
    const allowed = await this.allowed();
    const named = [author.team, author.enterprise].some(
      (id) => id !== undefined && allowed.has(id),
    );
    if (author.app === true) return named ? undefined : "outsider";
    const provenByPayload = named && author.confirm !== true;
    if (provenByPayload && this.options.allowGuests) return undefined;

    const { people, clock } = this.options;
    await settleWithin(people.resolve([author.user]), this.options.lookupWaitMs ?? 1_000, clock);
    const person = people.person(author.user);
    if (person === undefined) return named ? "unchecked" : "outsider";
    const member =
      provenByPayload ||
      [person.teamId, person.enterpriseId].some((id) => id !== undefined && allowed.has(id));
    if (!member) return "outsider";
    if (!this.options.allowGuests && person.guest === true) return "guest";
    return undefined;
  }

  private allowed(): Promise<ReadonlySet<string>> {
    this.allowedIds ??= this.readAllowed().catch((error: unknown) => {
      this.allowedIds = undefined;
      throw error;
    });
    return this.allowedIds;
  }

  private async readAllowed(): Promise<ReadonlySet<string>> {
    const me = await this.options.installation.whoAmI();
    const own = [me.teamId, me.enterpriseId].filter((id): id is string => id !== undefined);
    const listed = this.options.allowedTeamIds;
    if (listed === undefined) return new Set(own);
    if (!own.some((id) => listed.includes(id))) {
      this.options.logger.warn(
        { workspace: me.teamId },
        "ALLOWED_TEAM_IDS leaves out the bot's own workspace: its people are not answered",
      );
    }
    return new Set(listed);
  }
}
