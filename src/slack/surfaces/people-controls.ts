import type { IdentityMode } from "../../config-people.js";
import type { Command } from "../../controls/command-table.js";
import type { Logger } from "../../logger.js";
import type { Assistants } from "../../people/assistants.js";
import type { TokenVault } from "../../people/token-vault.js";
import type { Identity, SlackPerson, SlackWebApi } from "../web-api/web-api.js";
import { LINKING_OFF, linkForm } from "./link-form.js";

/** `/assistant link`, `unlink` and `use`, and what `status` says of them. */
export interface PeopleControlDeps {
  vault: Pick<TokenVault, "enabled" | "unlink" | "isLinked">;
  assistants: Assistants;
  identityMode: IdentityMode;
  /** LINK_TOKEN_HELP. */
  help: string;
  /** views.open for the form; users.info says who is an admin or owner. */
  slack: (team: string) => Pick<SlackWebApi, "openView" | "userInfo">;
  /** Who the bot is in a workspace (auth.test): its installation's workspace and org. */
  whoAmI: (team: string) => Promise<Pick<Identity, "teamId" | "enterpriseId">>;
  logger: Logger;
  /** A person's link or a channel's assistant changed (App Homes are published again). */
  onChanged?: (owner: { team: string; user: string }) => void;
}

export interface CommandPlace {
  team: string;
  channel: string;
  user: string;
  /** The command's trigger: the link form opens on it. */
  triggerId: string;
}

type PeopleCommand = Extract<Command, { name: "link" | "unlink" | "use" }>;

export const NOT_ADMIN =
  "Only workspace admins and owners can choose the assistant of a channel. Ask one of them, or use `/assistant status` to see the one in use.";

/** An admin of another organisation admitted here (ALLOWED_TEAM_IDS, a shared channel). */
export const NOT_OWN_ADMIN =
  "Only admins and owners of the workspace I am installed in can choose the assistant of a channel; being an admin of another workspace does not count here. Ask one of them, or use `/assistant status` to see the one in use.";

/**
 * The command's answer, or undefined when the answer is the form itself (the command is then
 * acknowledged without a message).
 */
export async function peopleCommand(
  cmd: PeopleCommand,
  place: CommandPlace,
  deps: PeopleControlDeps,
): Promise<string | undefined> {
  const owner = { team: place.team, user: place.user };
  switch (cmd.name) {
    case "link": {
      if (!deps.vault.enabled) return LINKING_OFF;
      // Not awaited: the trigger is answered at once; a form that cannot open is logged.
      void deps
        .slack(place.team)
        .openView({ trigger_id: place.triggerId, view: linkForm(deps.help) })
        .catch((error: unknown) => {
          deps.logger.warn({ err: String(error) }, "could not open the link form");
        });
      return undefined;
    }
    case "unlink": {
      if (!deps.vault.enabled) return LINKING_OFF;
      const had = await deps.vault.unlink(owner);
      if (had) deps.onChanged?.(owner);
      return had
        ? `Your access token is forgotten. ${afterUnlink(deps.identityMode)}`
        : "You have no access token linked.";
    }
    case "use":
      return useAssistant(cmd.choice, place, deps);
  }
}

function afterUnlink(mode: IdentityMode): string {
  if (mode === "personal") return "Link one again with `/assistant link` to ask the assistant.";
  if (mode === "either") return "Your questions use the bot's shared access from now on.";
  return "";
}

async function useAssistant(
  choice: string,
  place: CommandPlace,
  deps: PeopleControlDeps,
): Promise<string> {
  const { assistants } = deps;
  const wanted = choice.toLowerCase() === "default" ? undefined : assistants.find(choice);
  if (wanted === undefined && choice.toLowerCase() !== "default") {
    const names = assistants.list.map((a) => `*${a.label}* (\`${a.id}\`)`).join(", ");
    return `:warning: “${choice}” is not an assistant of this workspace. Choose one of ${names}, or \`default\`.`;
  }
  if (place.channel.startsWith("D")) {
    return "In your direct messages with me, choose your assistant in my App Home (the Home tab).";
  }
  let person: SlackPerson;
  let me: Pick<Identity, "teamId" | "enterpriseId">;
  try {
    [person, me] = await Promise.all([
      deps.slack(place.team).userInfo(place.user),
      deps.whoAmI(place.team),
    ]);
  } catch (error) {
    deps.logger.warn({ err: String(error) }, "could not look up who may choose the assistant");
    return "Slack did not say whether you are a workspace admin, so nothing changed. Please try again.";
  }
  if (!person.admin) return NOT_ADMIN;
  if (!ofThisInstallation(person, place.team, me)) return NOT_OWN_ADMIN;
  await assistants.setForChannel(place.team, place.channel, wanted);
  deps.onChanged?.({ team: place.team, user: place.user });
  const now = await assistants.forChannel(place.team, place.channel);
  return `New conversations in this channel now talk to *${now.label}*${wanted === undefined ? " (the default)" : ""}. Conversations already started keep their assistant.`;
}

/**
 * Whether a person belongs to the installation's own workspace or its Enterprise org. Being
 * admitted (ALLOWED_TEAM_IDS) lets another organisation's people ask, not run this workspace:
 * their `is_admin` is about their own.
 */
function ofThisInstallation(
  person: Pick<SlackPerson, "teamId" | "enterpriseId">,
  team: string,
  me: Pick<Identity, "teamId" | "enterpriseId">,
): boolean {
  if (person.teamId !== undefined && [team, me.teamId].includes(person.teamId)) return true;
  return me.enterpriseId !== undefined && person.enterpriseId === me.enterpriseId;
}

/** What `/assistant status` adds: the assistant in use here and the person's link. */
export async function peopleStatus(
  place: Omit<CommandPlace, "triggerId">,
  deps: PeopleControlDeps,
): Promise<string[]> {
  const { assistants } = deps;
  const direct = place.channel.startsWith("D");
  const here = direct
    ? await assistants.forPerson(place.team, place.user)
    : await assistants.forChannel(place.team, place.channel);
  const lines = [`Assistant for new conversations here: *${here.label}*.`];
  if (deps.vault.enabled) {
    const linked = await deps.vault.isLinked({ team: place.team, user: place.user });
    lines.push(
      linked
        ? "Your own access token is linked: your questions go to the assistant as you."
        : "You have no access token linked (`/assistant link`).",
    );
  }
  return lines;
}
