import type { z } from "zod";

/**
 * What one environment variable is, and how a table of them is read. A variable is declared
 * once, in a table whose key is its name (config-settings.ts): how its text is parsed (which
 * also says its unit and its error), its default, and when it is required.
 */

export type Env = Readonly<Record<string, string | undefined>>;

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Whether a variable is set (not blank) in the environment being read. */
export type Presence = (name: string) => boolean;

/** A variable required only in some setups: when, and what to say when it is missing. */
export interface Requirement {
  when: (isSet: Presence) => boolean;
  /** The sentence when it is missing; by default "<NAME> is required but not set." */
  missing?: (isSet: Presence) => string;
}

export interface Setting<T> {
  /**
   * Parses the variable's trimmed text. An issue reads "<NAME> is malformed: <message>.",
   * unless it is a whole sentence of its own (see {@link sentence}).
   */
  parse: (name: string) => z.ZodType<T, string>;
  /** The text used when the variable is unset or blank, as an operator would write it. */
  default?: string;
  /** Unset without a default: undefined, unless required always or in some setups. */
  required?: true | Requirement;
}

/** An issue that is the whole error sentence, not the part after "is malformed:". */
export const sentence = (message: string) => ({
  code: "custom" as const,
  message,
  params: { sentence: true },
});

type Parsed<S> = S extends { parse: (name: string) => infer Z extends z.ZodType }
  ? z.output<Z>
  : never;
type Value<S> = S extends { default: string } | { required: true }
  ? Parsed<S>
  : Parsed<S> | undefined;

/** A table's values by variable name, each of its parsed type. */
export type Values<Table> = { [Name in keyof Table]: Value<Table[Name]> };

/** The variables' trimmed texts, with a blank one as unset. */
export function presence(env: Env): Presence {
  return (name) => (env[name]?.trim() ?? "") !== "";
}

/**
 * Reads every variable of the table in its order; the first problem stops the reading with
 * one sentence naming the variable. A value is never quoted unless its parse quotes it.
 */
export function readSettings<Table extends Record<string, Setting<unknown>>>(
  env: Env,
  table: Table,
): Values<Table> {
  const isSet = presence(env);
  const values: Record<string, unknown> = {};
  for (const [name, setting] of Object.entries(table)) {
    values[name] = readSetting(name, setting, env[name]?.trim() || setting.default, isSet);
  }
  return values as Values<Table>;
}

function readSetting(
  name: string,
  { parse, required }: Setting<unknown>,
  text: string | undefined,
  isSet: Presence,
): unknown {
  if (text === undefined) {
    const missing = `${name} is required but not set.`;
    if (required === true) throw new ConfigError(missing);
    if (required?.when(isSet)) throw new ConfigError(required.missing?.(isSet) ?? missing);
    return undefined;
  }
  const parsed = parse(name).safeParse(text);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  if (issue?.code === "custom" && issue.params?.sentence === true) {
    throw new ConfigError(issue.message);
  }
  throw new ConfigError(`${name} is malformed: ${issue?.message ?? "is malformed"}.`);
}
