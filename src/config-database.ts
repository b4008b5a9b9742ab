import { z } from "zod";
import { sentence } from "./config-setting.js";

/**
 * PostgreSQL in place of the SQLite file (contract: DATABASE_URL), and how replicas on one
 * database share the work (LEASE_SECONDS): their kinds of value and what the bot keeps of them.
 */

export interface DatabaseConfig {
  /**
   * PostgreSQL (`postgres://…`): all state there, and several copies of the bot may run
   * against it at once. A secret: it may hold a password.
   */
  url: string | undefined;
  /**
   * How long a replica's hold on a conversation lasts unless renewed, ms: how long a dead
   * replica's answers wait before another takes them over.
   */
  leaseTtlMs: number;
}

/** A PostgreSQL URL; never quoted back, as it may hold a password. */
export const postgresUrl = () =>
  z.string().refine(
    (raw) => {
      const url = URL.canParse(raw) ? new URL(raw) : undefined;
      return url !== undefined && /^postgres(ql)?:$/.test(url.protocol) && url.hostname !== "";
    },
    {
      message:
        "it must be a PostgreSQL URL such as postgres://user:password@host:5432/database (its value is not shown: it may hold a password)",
    },
  );

/** The lease in seconds from 3 to 600, read as milliseconds. */
export const leaseSeconds = (name: string) =>
  z.string().transform((raw, ctx) => {
    const seconds = Number(raw);
    if (/^\d+$/.test(raw) && seconds >= 3 && seconds <= 600) return seconds * 1000;
    ctx.addIssue(
      sentence(`${name} must be a whole number of seconds from 3 to 600, not "${raw}".`),
    );
    return z.NEVER;
  });

/** The URL and its password, for the log scrubber. */
export function databaseSecrets(config: DatabaseConfig): string[] {
  if (config.url === undefined) return [];
  const password = decodeURIComponent(new URL(config.url).password);
  return password === "" ? [config.url] : [config.url, password];
}
