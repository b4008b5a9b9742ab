import { z } from "zod";
import {
  MAX_STEPS_MAX,
  MAX_STEPS_MIN,
  MODEL_OVERRIDES,
  REASONING_EFFORTS,
  type RunSettings,
} from "../service/schemas.js";

/** A change to a person's settings: `null` removes a setting ("default"). */
export type SettingsChange = { [K in keyof RunSettings]?: RunSettings[K] | null };

export type Command =
  | { name: "help" }
  | { name: "stop" }
  | { name: "status" }
  | { name: "link" }
  | { name: "unlink" }
  /** `choice`: the words after `use`, an assistant's id or label, or `default`. */
  | { name: "use"; choice: string }
  | { name: "set"; setting: "model" | "effort" | "steps"; change: SettingsChange; value: string };

interface Row {
  name: string;
  /** Shown in the usage text. */
  usage: string;
  summary: string;
  /** Validates the argument words (after the command name). */
  args: z.ZodType<Command>;
}

const noArgs = (command: Command) => z.tuple([]).transform(() => command);

const settingArg = <T extends string>(
  setting: "model" | "effort" | "steps",
  value: z.ZodType<T>,
  toChange: (value: T) => SettingsChange,
) =>
  z
    .tuple([value])
    .transform(([v]): Command => ({ name: "set", setting, change: toChange(v), value: v }));

/** A setting picked from a list, or `default` to drop it (`null` to `toChange`). */
const choiceArg = <T extends string>(
  setting: "model" | "effort",
  choices: readonly T[],
  toChange: (value: T | null) => SettingsChange,
) =>
  settingArg(
    setting,
    z.enum([...choices, "default"], {
      message: `${setting} must be ${choices.join(", ")} or default`,
    }),
    // `default` is the one accepted value that is not a choice.
    (v) => toChange(choices.find((choice) => choice === v) ?? null),
  );

const stepsValue = z.union([
  z.literal("default"),
  z
    .string()
    .regex(/^\d+$/, {
      message: `steps must be a whole number from ${MAX_STEPS_MIN} to ${MAX_STEPS_MAX}, or default`,
    })
    .refine((s) => Number(s) >= MAX_STEPS_MIN && Number(s) <= MAX_STEPS_MAX, {
      message: `steps must be from ${MAX_STEPS_MIN} to ${MAX_STEPS_MAX}, or default`,
    }),
]);

/** The whole command language in one table; the usage text is generated from it. */
export const COMMANDS: readonly Row[] = [
  {
    name: "help",
    usage: "/assistant help",
    summary: "show this help",
    args: noArgs({ name: "help" }),
  },
  {
    name: "stop",
    usage: "/assistant stop",
    summary: "stop your answers still being written in this channel",
    args: noArgs({ name: "stop" }),
  },
  {
    name: "model",
    usage: `/assistant model ${MODEL_OVERRIDES.join("|")}|default`,
    summary: "the model for your next questions in this channel",
    args: choiceArg("model", MODEL_OVERRIDES, (v) => ({ modelOverride: v })),
  },
  {
    name: "effort",
    usage: `/assistant effort ${REASONING_EFFORTS.join("|")}|default`,
    summary: "how hard the assistant thinks (reasoning effort)",
    args: choiceArg("effort", REASONING_EFFORTS, (v) => ({ reasoning_effort: v })),
  },
  {
    name: "steps",
    usage: `/assistant steps <${MAX_STEPS_MIN}-${MAX_STEPS_MAX}>|default`,
    summary: "the most steps the assistant may take per answer",
    args: settingArg("steps", stepsValue, (v) => ({
      maxSteps: v === "default" ? null : Number(v),
    })),
  },
  {
    name: "status",
    usage: "/assistant status",
    summary: "your settings here and your answers in progress",
    args: noArgs({ name: "status" }),
  },
  {
    name: "link",
    usage: "/assistant link",
    summary: "link your own access token for the assistant service",
    args: noArgs({ name: "link" }),
  },
  {
    name: "unlink",
    usage: "/assistant unlink",
    summary: "forget your linked access token",
    args: noArgs({ name: "unlink" }),
  },
  {
    name: "use",
    usage: "/assistant use <assistant id or label>|default",
    summary: "the assistant new conversations in this channel talk to (workspace admins)",
    args: z
      .array(z.string())
      .min(1)
      .transform((words): Command => ({ name: "use", choice: words.join(" ") })),
  },
];

export type ParseResult = { ok: true; command: Command } | { ok: false; problem: string };

/** Parses the text after `/assistant`. Empty text is help. */
export function parseCommand(text: string): ParseResult {
  const words = text
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
  const [name, ...rest] = words;
  if (name === undefined) return { ok: true, command: { name: "help" } };
  const row = COMMANDS.find((r) => r.name === name);
  if (!row) return { ok: false, problem: `“${name}” is not a command I know.` };
  const parsed = row.args.safeParse(rest);
  if (parsed.success) return { ok: true, command: parsed.data };
  const issue = parsed.error.issues[0];
  if (issue?.code === "too_big")
    return { ok: false, problem: `\`${row.usage}\` takes no more words than that.` };
  if (issue?.code === "too_small")
    return { ok: false, problem: `\`${row.name}\` needs a value: \`${row.usage}\`.` };
  return { ok: false, problem: `${capitalize(issue?.message ?? "that value is not allowed")}.` };
}

export function usageLines(): string[] {
  return COMMANDS.map((row) => `• \`${row.usage}\`: ${row.summary}`);
}

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
