import { describe, expect, it } from "vitest";
import { configuredSecrets, loadConfig } from "../src/config.js";
import { BASE_ENV as base, startError } from "./support/config-env.js";

describe("the database settings", () => {
  it("default to the SQLite file and 15-second leases", () => {
    const config = loadConfig(base);
    expect(config.database).toEqual({ url: undefined, leaseTtlMs: 15_000 });
    expect(config.databasePath).toBe("./data/bridge.db");
  });

  it("take a PostgreSQL URL and keep it, and its password, out of every log line", () => {
    const url = "postgres://bridge:p%40ss-w0rd@db.internal:5432/bridge";
    const config = loadConfig({ ...base, DATABASE_URL: url, LEASE_SECONDS: "5" });
    expect(config.database).toEqual({ url, leaseTtlMs: 5_000 });
    expect(configuredSecrets(config)).toEqual(expect.arrayContaining([url, "p@ss-w0rd"]));
  });

  it("refuse a URL that is not PostgreSQL's without quoting it", () => {
    for (const bad of ["mysql://root:hunter2@db/x", "hunter2", "postgres://"]) {
      const message = startError({ DATABASE_URL: bad });
      expect(message).toMatch(/^DATABASE_URL is malformed/);
      expect(message).not.toContain("hunter2");
    }
  });

  it("refuse leases too short to renew or longer than ten minutes", () => {
    for (const bad of ["2", "601", "1.5", "soon"]) {
      expect(startError({ LEASE_SECONDS: bad })).toContain("LEASE_SECONDS must be");
    }
  });
});
