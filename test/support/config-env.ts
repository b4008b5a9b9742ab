import { expect } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";

/** The smallest environment the bot starts with (HTTP mode). */
export const BASE_ENV = {
  SLACK_BOT_TOKEN: "xoxb-1-secret",
  SLACK_SIGNING_SECRET: "shh",
  ASSISTANT_API_URL: "http://127.0.0.1:8787/",
  ASSISTANT_API_TOKEN: "svc-token",
  ASSISTANT_ID: "asst-1",
};

/** The one sentence a start with these settings (over BASE_ENV) stops with. */
export function startError(env: Record<string, string>): string {
  try {
    loadConfig({ ...BASE_ENV, ...env });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("the configuration was accepted");
}
