/**
 * PostgreSQL in place of the SQLite file (contract: DATABASE_URL), and how replicas on one
 * database share the work (LEASE_SECONDS). Read by `config.ts`, the only reader of the
 * environment.
 */

export interface DatabaseConfig {
  /**
   * PostgreSQL (DATABASE_URL, `postgres://…`): all state there, and several copies of the
   * bot may run against it at once. A secret: it may hold a password.
   */
  url: string | undefined;
  /**
   * How long a replica's hold on a conversation lasts unless renewed, ms (LEASE_SECONDS,
   * default 15): how long a dead replica's answers wait before another takes them over.
   */
  leaseTtlMs: number;
}

type Env = Record<string, string | undefined>;

/** A setting that cannot be used; config.ts turns it into its ConfigError. */
export class DatabaseSettingError extends Error {}

const DEFAULT_LEASE_SECONDS = 15;

export function readDatabaseConfig(env: Env): DatabaseConfig {
  return {
    url: databaseUrl(setting(env, "DATABASE_URL")),
    leaseTtlMs: leaseSeconds(setting(env, "LEASE_SECONDS")) * 1000,
  };
}

function setting(env: Env, name: string): string | undefined {
  const raw = env[name]?.trim();
  return raw === undefined || raw === "" ? undefined : raw;
}

/** Never quoted back: the URL may hold a password. */
function databaseUrl(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (url === undefined || !/^postgres(ql)?:$/.test(url.protocol) || url.hostname === "") {
    throw new DatabaseSettingError(
      "DATABASE_URL is malformed: it must be a PostgreSQL URL such as postgres://user:password@host:5432/database (its value is not shown: it may hold a password).",
    );
  }
  return raw;
}

function leaseSeconds(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_LEASE_SECONDS;
  const seconds = Number(raw);
  if (!/^\d+$/.test(raw) || seconds < 3 || seconds > 600) {
    throw new DatabaseSettingError(
      `LEASE_SECONDS must be a whole number of seconds from 3 to 600, not "${raw}".`,
    );
  }
  return seconds;
}

/** The URL and its password, for the log scrubber. */
export function databaseSecrets(config: DatabaseConfig): string[] {
  if (config.url === undefined) return [];
  const password = decodeURIComponent(new URL(config.url).password);
  return password === "" ? [config.url] : [config.url, password];
}
