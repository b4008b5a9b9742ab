import { z } from "zod";

/**
 * People's own identities at the service (contract: TOKEN_ENCRYPTION_KEY, IDENTITY_MODE,
 * ASSISTANTS): who the bot asks as, and which assistants may be chosen. Their kinds of value
 * and what the bot keeps of them.
 */

export type IdentityMode = "shared" | "either" | "personal";

/** An assistant people may choose: its service id and the label Slack shows. */
export interface AssistantChoice {
  id: string;
  label: string;
}

export interface PeopleConfig {
  /** AES-256 key; undefined: linking is off. */
  encryptionKey: Buffer | undefined;
  /**
   * Whose token a request carries: always the shared one, a linked person's own when they
   * have one (`either`), or only ever the person's own (`personal`: an unlinked person is
   * told to link and nothing is sent).
   */
  identityMode: IdentityMode;
  /** The assistants people may choose; ASSISTANT_ID is always the first. */
  assistants: readonly AssistantChoice[];
  /** Where a person gets their access token, shown in the link form (the interface does not say). */
  linkTokenHelp: string;
}

export const DEFAULT_LINK_TOKEN_HELP =
  "Ask the team that runs the assistant service for a personal access token.";

/** An AES-256 key: exactly 32 bytes, written in (standard or URL-safe) base64. */
export const encryptionKey = () =>
  z.string().transform((value, ctx) => {
    const shaped = /^[A-Za-z0-9+/_-]+={0,2}$/.test(value);
    const key = shaped ? Buffer.from(value, "base64") : Buffer.alloc(0);
    if (key.length === 32) return key;
    ctx.addIssue(
      "it must be 32 random bytes written in base64 (44 characters), e.g. the output of `openssl rand -base64 32`",
    );
    return z.NEVER;
  });

/** `id=Label` pairs separated by commas, each id and label listed once. */
export const assistantChoices = (name: string) =>
  z.string().transform((raw, ctx) => {
    const listed: AssistantChoice[] = [];
    for (const pair of raw.split(",").filter((p) => p.trim() !== "")) {
      const at = pair.indexOf("=");
      const choice = {
        id: (at < 0 ? "" : pair.slice(0, at)).trim(),
        label: (at < 0 ? "" : pair.slice(at + 1)).trim(),
      };
      const problem = pairProblem(name, pair.trim(), choice, listed);
      if (problem !== undefined) {
        ctx.addIssue(problem);
        return z.NEVER;
      }
      listed.push(choice);
    }
    return listed;
  });

function pairProblem(
  name: string,
  pair: string,
  { id, label }: AssistantChoice,
  listed: readonly AssistantChoice[],
): string | undefined {
  if (id === "" || label === "" || /\s/.test(id)) {
    return `"${pair}" is not an id=Label pair (e.g. ${name}=asst-1=General,asst-2=Legal)`;
  }
  if (label.length > 75)
    return `the label of ${id} is over 75 characters (Slack's limit for an option)`;
  if (listed.some((a) => a.id === id || a.label.toLowerCase() === label.toLowerCase())) {
    return `${id} (${label}) is listed twice, by id or by label`;
  }
  return undefined;
}

/** The assistants to choose from: ASSISTANT_ID first (labelled as listed, or by its id). */
export function choices(
  defaultId: string,
  listed: readonly AssistantChoice[] = [],
): AssistantChoice[] {
  const own = listed.find((a) => a.id === defaultId);
  const first = own ?? { id: defaultId, label: defaultId };
  return [first, ...listed.filter((a) => a !== own)].slice(0, 100);
}
