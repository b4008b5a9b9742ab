import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type Bot, createBot } from "../../src/bot.js";
import { configuredSecrets, loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/logger.js";
import { type FakeSlack, startFakeSlack } from "../../tools/fake-slack/server.js";
import { BOT_TOKEN, CHANNEL, startHarness } from "../support/bridge-harness.js";
import { tempFolder } from "../support/temp-folder.js";

let slack: FakeSlack | undefined;
let bot: Bot | undefined;
afterEach(async () => {
  await bot?.stop(0).catch(() => undefined);
  await slack?.close();
  bot = undefined;
  slack = undefined;
});

async function botFor(apiUrl: string): Promise<{ bot: Bot; logs: string[] }> {
  const logs: string[] = [];
  const config = loadConfig({
    SLACK_BOT_TOKEN: BOT_TOKEN,
    SLACK_SIGNING_SECRET: "secret",
    SLACK_API_URL: apiUrl,
    PORT: "0",
    ASSISTANT_API_URL: "http://127.0.0.1:9",
    ASSISTANT_API_TOKEN: "t",
    ASSISTANT_ID: "a",
    DATABASE_PATH: join(tempFolder("bridge-start-"), "bridge.db"),
  });
  const destination = {
    write(line: string) {
      logs.push(line);
      return true;
    },
  } as unknown as NodeJS.WritableStream;
  const logger = createLogger({ level: "debug", secrets: configuredSecrets(config), destination });
  return { bot: await createBot(config, logger), logs };
}

describe("starting", () => {
  it("fails with one clear sentence when Slack refuses the bot token", async () => {
    slack = await startFakeSlack();
    slack.failNext("auth.test", { status: 200, error: "invalid_auth" });
    const made = await botFor(slack.apiUrl);
    bot = made.bot;
    await expect(bot.start()).rejects.toThrow(
      "Slack refused SLACK_BOT_TOKEN (invalid_auth). Check the bot token of your app.",
    );
    expect(made.logs.join("\n")).not.toContain(BOT_TOKEN);
  });

  it("fails clearly when Slack cannot be reached, naming the URL", async () => {
    const made = await botFor("http://127.0.0.1:9/api/");
    bot = made.bot;
    await expect(bot.start()).rejects.toThrow(
      /^Could not reach Slack at http:\/\/127\.0\.0\.1:9\/api\/ to check SLACK_BOT_TOKEN/,
    );
    expect(made.logs.join("\n")).not.toContain(BOT_TOKEN);
  });

  it("knows who it is before the first event, so that no acknowledgement waits on Slack", async () => {
    const x = await startHarness();
    try {
      const atStart = x.slack.callsTo("auth.test").length;
      expect(atStart).toBeGreaterThanOrEqual(2);
      const { threadTs } = await x.mention("<@UBOT> hello?");
      await x.settled(CHANNEL, threadTs);
      expect(x.slack.callsTo("auth.test")).toHaveLength(atStart);
    } finally {
      await x.close();
    }
  });
});
