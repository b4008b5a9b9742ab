import { isIP } from "node:net";
import { z } from "zod";
import { sentence } from "./config-setting.js";

/**
 * The kinds of value a setting holds, each a parse of the variable's trimmed text that says
 * its unit and its error, given the variable's name for messages that repeat it. A kind with
 * options (`wholeNumber(0, 65_535)`) is a function of them that returns the parse.
 */

/** Any text (already trimmed and not blank). */
export const text = () => z.string();

/** A token or secret: one word. Its value is never quoted. */
export const word = () =>
  z.string().refine((v) => !/\s/.test(v), { message: "it must not contain spaces" });

/** A Slack token of one type, `xoxb-…` or `xapp-…`. */
export const slackToken = (prefix: string) => () =>
  z.string().refine((v) => v.startsWith(prefix) && !/\s/.test(v), {
    message: `it should start with "${prefix}"`,
  });

/** A whole number from `min` to `max`, in the unit the variable's name says. */
export const wholeNumber =
  (min = 1, max = Number.MAX_SAFE_INTEGER) =>
  (name: string) =>
    z
      .string()
      .regex(/^\d+$/, { message: `${name} must be a whole number` })
      .transform(Number)
      .refine((n) => n >= min && n <= max, {
        message: `${name} must be between ${min} and ${max}`,
      });

/** 0 for off, or a whole number from `least` to `max`. */
export const offOrAtLeast = (least: number, max: number) => {
  const number = wholeNumber(0, max);
  return (name: string) =>
    number(name).refine((n) => n === 0 || n >= least, {
      message: `${name} must be 0 (off) or at least ${least}`,
    });
};

/** A count of calls a minute allows. */
export const perMinute = wholeNumber;

/** A duration written in seconds, read as milliseconds. */
export const seconds =
  (min = 1, max?: number) =>
  (name: string) =>
    wholeNumber(min, max)(name).transform((s) => s * 1000);

/** A duration written in days, read as milliseconds. */
export const days = (min: number, max: number) => (name: string) =>
  wholeNumber(min, max)(name).transform((d) => d * 86_400_000);

/** One of a few words, in any case: "<NAME> must be a, b or c" (or "it must be …"). */
export const oneOf =
  <const Word extends string>(words: readonly [Word, ...Word[]], subject?: string) =>
  (name: string) =>
    z
      .string()
      .toLowerCase()
      .pipe(z.enum(words, { message: `${subject ?? name} must be ${listed(words, "or")}` }));

/** true or false, in any case. */
export const flag = () =>
  z
    .string()
    .toLowerCase()
    .pipe(z.enum(["true", "false"], { message: "it must be true or false" }))
    .transform((v) => v === "true");

/** An IP address to listen on. */
export const ipAddress = (name: string) =>
  z.string().refine((v) => isIP(v) !== 0, {
    message: `${name} must be an IP address to listen on, such as 127.0.0.1, 0.0.0.0 or ::`,
  });

/**
 * An http(s) URL that tokens travel to: plain http is refused unless it stays on this machine,
 * since the tokens in the headers would be readable by anyone on the way.
 */
export const secureUrl = (name: string) =>
  z
    .string()
    .refine((v) => /^https?:\/\/[^\s]+$/.test(v) && URL.canParse(v), {
      message: `${name} must be an http(s) URL`,
    })
    .transform((v, ctx) => {
      if (v.startsWith("https://") || isLoopback(new URL(v).hostname)) return v;
      ctx.addIssue(
        sentence(
          `${name} is refused: plain http:// is allowed only for a loopback address (127.0.0.0/8, ::1, localhost); use https://.`,
        ),
      );
      return z.NEVER;
    });

/**
 * Whether a URL's host is this machine: 127.0.0.0/8, ::1 or localhost. The WHATWG parser has
 * already written IPv4 in its canonical dotted form (`127.1` → `127.0.0.1`).
 */
function isLoopback(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/** Workspace (`T…`) and Enterprise org (`E…`) ids separated by commas, each kept once. */
export const teamIds = () =>
  z.string().transform((raw, ctx) => {
    const ids = raw
      .split(",")
      .map((id) => id.trim())
      .filter((id) => id !== "");
    const wrong = ids.find((id) => !/^[TE][A-Z0-9]{2,}$/.test(id));
    if (wrong === undefined && ids.length > 0) return [...new Set(ids)];
    const problem =
      wrong === undefined
        ? "it names no id"
        : `"${wrong}" is not a workspace (T…) or Enterprise org (E…) id`;
    ctx.addIssue(`${problem}; give ids separated by commas`);
    return z.NEVER;
  });

/** "A", "A and B", "A, B and C" (or with "or"). */
export function listed(names: readonly string[], last = "and"): string {
  return names.length <= 1
    ? (names[0] ?? "")
    : `${names.slice(0, -1).join(", ")} ${last} ${names.at(-1)}`;
}
