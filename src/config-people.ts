/**
 * The settings of people's own identities at the service (contract: TOKEN_ENCRYPTION_KEY,
 * IDENTITY_MODE, ASSISTANTS) and the sentence telling a person where a token comes from.
 * Read by `config.ts` (the only reader of the environment), kept apart because it is one
 * concept: who the bot asks as, and which assistants may be chosen.
 */

export type IdentityMode = "shared" | "either" | "personal";

/** An assistant people may choose: its service id and the label Slack shows. */
export interface AssistantChoice {
  id: string;
  label: string;
}

export interface PeopleConfig {
  /** AES-256 key (TOKEN_ENCRYPTION_KEY, 32 bytes base64); undefined: linking is off. */
  encryptionKey: Buffer | undefined;
  /**
   * Whose token a request carries (IDENTITY_MODE, default `shared`): always the shared one,
   * a linked person's own when they have one (`either`), or only ever the person's own
   * (`personal`: an unlinked person is told to link and nothing is sent).
   */
  identityMode: IdentityMode;
  /** The assistants people may choose (ASSISTANTS); ASSISTANT_ID is always the first. */
  assistants: readonly AssistantChoice[];
  /**
   * Where a person gets their access token, shown in the link form (LINK_TOKEN_HELP;
   * the interface does not say how a token is obtained).
   */
  linkTokenHelp: string;
}

export const DEFAULT_LINK_TOKEN_HELP =
  "Ask the team that runs the assistant service for a personal access token.";

type Env = Record<string, string | undefined>;

/** A setting that cannot be used; config.ts turns it into its ConfigError. */
export class PeopleSettingError extends Error {}

function optional(env: Env, name: string): string | undefined {
  const raw = env[name]?.trim();
  return raw === undefined || raw === "" ? undefined : raw;
}

/** TOKEN_ENCRYPTION_KEY: exactly 32 bytes, written in (standard or URL-safe) base64. */
export function encryptionKey(value: string | undefined, name: string): Buffer | undefined {
  if (value === undefined) return undefined;
  const shaped = /^[A-Za-z0-9+/_-]+={0,2}$/.test(value);
  const key = shaped ? Buffer.from(value, "base64") : Buffer.alloc(0);
  if (key.length !== 32) {
    throw new PeopleSettingError(
      `${name} is malformed: it must be 32 random bytes written in base64 (44 characters), e.g. the output of \`openssl rand -base64 32\`.`,
    );
  }
  return key;
}

function identityMode(env: Env, hasKey: boolean): IdentityMode {
  const raw = optional(env, "IDENTITY_MODE")?.toLowerCase() ?? "shared";
  if (raw !== "shared" && raw !== "either" && raw !== "personal") {
    throw new PeopleSettingError(
      "IDENTITY_MODE is malformed: it must be shared, either or personal.",
    );
  }
  if (raw !== "shared" && !hasKey) {
    throw new PeopleSettingError(
      `IDENTITY_MODE=${raw} needs TOKEN_ENCRYPTION_KEY: people's own tokens are kept only encrypted.`,
    );
  }
  return raw;
}

/** ASSISTANTS: `id=Label` pairs separated by commas; ASSISTANT_ID is added first when absent. */
function assistants(env: Env, defaultId: string): AssistantChoice[] {
  const raw = optional(env, "ASSISTANTS");
  const listed: AssistantChoice[] = [];
  for (const pair of raw === undefined ? [] : raw.split(",")) {
    if (pair.trim() === "") continue;
    const at = pair.indexOf("=");
    const id = (at < 0 ? "" : pair.slice(0, at)).trim();
    const label = (at < 0 ? "" : pair.slice(at + 1)).trim();
    if (id === "" || label === "" || /\s/.test(id)) {
      throw new PeopleSettingError(
        `ASSISTANTS is malformed: "${pair.trim()}" is not an id=Label pair (e.g. ASSISTANTS=asst-1=General,asst-2=Legal).`,
      );
    }
    if (label.length > 75) {
      throw new PeopleSettingError(
        `ASSISTANTS is malformed: the label of ${id} is over 75 characters (Slack's limit for an option).`,
      );
    }
    if (listed.some((a) => a.id === id || a.label.toLowerCase() === label.toLowerCase())) {
      throw new PeopleSettingError(
        `ASSISTANTS is malformed: ${id} (${label}) is listed twice, by id or by label.`,
      );
    }
    listed.push({ id, label });
  }
  const own = listed.find((a) => a.id === defaultId);
  const first = own ?? { id: defaultId, label: defaultId };
  return [first, ...listed.filter((a) => a !== own)].slice(0, 100);
}

function linkTokenHelp(env: Env): string {
  const help = optional(env, "LINK_TOKEN_HELP") ?? DEFAULT_LINK_TOKEN_HELP;
  if (help.length > 1_000) {
    throw new PeopleSettingError("LINK_TOKEN_HELP is malformed: it is over 1,000 characters.");
  }
  return help;
}

/** The people settings, given the default assistant (ASSISTANT_ID, already read). */
export function readPeopleConfig(env: Env, defaultAssistantId: string): PeopleConfig {
  const key = encryptionKey(optional(env, "TOKEN_ENCRYPTION_KEY"), "TOKEN_ENCRYPTION_KEY");
  return {
    encryptionKey: key,
    identityMode: identityMode(env, key !== undefined),
    assistants: assistants(env, defaultAssistantId),
    linkTokenHelp: linkTokenHelp(env),
  };
}

/** What `npm run rotate-key` needs: the database, the key in use and the one to move to. */
export interface RotationConfig {
  /** The SQLite file (DATABASE_PATH), or PostgreSQL when DATABASE_URL is set. */
  database: { path: string; url: string | undefined };
  currentKey: Buffer;
  newKey: Buffer;
}

/** The rotation's settings (rotate-key-cli.ts); throws PeopleSettingError naming the variable. */
export function readRotationConfig(env: Env): RotationConfig {
  const required = (name: string) => {
    const key = encryptionKey(optional(env, name), name);
    if (key === undefined) throw new PeopleSettingError(`${name} is required but not set.`);
    return key;
  };
  const currentKey = required("TOKEN_ENCRYPTION_KEY");
  const newKey = required("NEW_TOKEN_ENCRYPTION_KEY");
  if (currentKey.equals(newKey)) {
    throw new PeopleSettingError(
      "NEW_TOKEN_ENCRYPTION_KEY is the same key as TOKEN_ENCRYPTION_KEY: generate a new one.",
    );
  }
  return {
    database: {
      path: optional(env, "DATABASE_PATH") ?? "./data/bridge.db",
      url: optional(env, "DATABASE_URL"),
    },
    currentKey,
    newKey,
  };
}
