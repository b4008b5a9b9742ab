/**
 * A person's own token in no log line, at debug, in either transport: the bot runs as a real
 * process, and everything it writes (stdout and stderr) is read back. The tokens have no
 * shape the scrubber knows (not `xox…`, no `Bearer`), and one of them the service refuses,
 * so the scrubber never learns it: only taking it out of the payload keeps it out of the log.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { LINK_VIEW_ID } from "../../src/slack/surfaces/link-form.js";
import { type FakeSlack, startFakeSlack } from "../../tools/fake-slack/server.js";
import { type RunningSimulator, startSimulator } from "../../tools/simulator/server.js";
import {
  appMention,
  eventEnvelope,
  nextTs,
  type Payload,
  postToBot,
  slashCommand,
  viewSubmission,
} from "../../tools/slack-requests.js";
import {
  CHANNEL,
  type Harness,
  hasStopButton,
  SIGNING_SECRET,
  startHarness,
  USER,
} from "../support/bridge-harness.js";
import { type ChildBot, childEnv, startChildBot } from "../support/child-bot.js";
import { tempFolder } from "../support/temp-folder.js";

/** Refused by the service: never linked, so never learnt by the log scrubber. */
const REFUSED = "sk-live-7f3a9c2e81d64b05a9f3c7e2d1b8a6f4";
/** Accepted and linked. */
const ACCEPTED = "sk-live-0c5e8d2b7a9f41e3b6d0c8a2f5e7b9d1";
/** Pasted after `/assistant link`, which takes no words. */
const PASTED = "sk-live-5b1d9e7c3a0f48b2e6c4a9d7f1b3e5c8";
const TOKENS = [REFUSED, ACCEPTED, PASTED];
const KEY = randomBytes(32).toString("base64");

const submission = (token: string) =>
  viewSubmission({
    user: USER,
    callback_id: LINK_VIEW_ID,
    values: { token: { token: { type: "plain_text_input", value: token } } },
  });

const command = (text: string, slack: FakeSlack) =>
  slashCommand({ text, user_id: USER, channel_id: CHANNEL, response_url: slack.responseUrl() });

/** A Slack request as the transport carries it; resolves with the bot's answer, parsed. */
type Send = (kind: "command" | "action" | "event", payload: Payload) => Promise<unknown>;

/** Opens the form, submits a refused and an accepted token, pastes one after the command, asks. */
async function linkAndAsk(slack: FakeSlack, sim: RunningSimulator, send: Send): Promise<void> {
  sim.control.revokeToken(REFUSED);
  await send("command", command("link", slack));
  await slack.waitFor((s) => s.views.length === 1);

  expect(await send("action", submission(REFUSED))).toMatchObject({
    response_action: "errors",
  });
  // The service was asked, and refused it.
  expect(sim.control.requests.some((r) => r.token === REFUSED && r.status === 401)).toBe(true);
  expect(await send("action", submission(ACCEPTED))).toMatchObject({
    response_action: "update",
  });
  expect(JSON.stringify(await send("command", command(`link ${PASTED}`, slack)))).toContain(
    "takes no more words",
  );

  const ts = nextTs();
  slack.seedMessage({ channel: CHANNEL, ts, user: USER, text: "<@UBOT> hello" });
  await send(
    "event",
    eventEnvelope(appMention({ channel: CHANNEL, user: USER, text: "<@UBOT> hello", ts })),
  );
  await slack.waitFor((s) => {
    const replies = s.replies(CHANNEL, ts);
    return replies.length > 0 && replies.every((m) => !hasStopButton(m));
  });
  // Asked as the person, with the token linked.
  expect(sim.control.requests.some((r) => /\/runs$/.test(r.path) && r.token === ACCEPTED)).toBe(
    true,
  );
}

function expectNoToken(written: string): void {
  for (const token of TOKENS) expect(written).not.toContain(token);
  // Nor a recognisable part of one.
  for (const token of TOKENS) expect(written).not.toContain(token.slice(8, 24));
}

describe("a person's token in the logs of the running process, at debug", () => {
  let sim: RunningSimulator | undefined;
  let slack: FakeSlack | undefined;
  let bot: ChildBot | undefined;

  afterEach(async () => {
    await bot?.kill("SIGKILL");
    await slack?.close();
    await sim?.close();
    bot = slack = sim = undefined;
  });

  async function launch(socketMode: boolean) {
    sim = await startSimulator({ queueDelayMs: 10, answer: { tokensPerSecond: 400 } });
    slack = await startFakeSlack({ socketMode });
    slack.seedUser({ id: USER, name: "alice" });
    bot = await startChildBot(
      childEnv({
        slackApiUrl: slack.apiUrl,
        serviceUrl: sim.url,
        databasePath: join(tempFolder("faults-token-logs-"), "bridge.db"),
        extra: {
          LOG_LEVEL: "debug",
          TOKEN_ENCRYPTION_KEY: KEY,
          IDENTITY_MODE: "either",
          ...(socketMode ? { SLACK_APP_TOKEN: "xapp-1-token-logs" } : {}),
        },
      }),
    );
    return { sim, slack, bot };
  }

  it("HTTP mode: is written nowhere, refused or linked", async () => {
    const x = await launch(false);
    const send: Send = async (kind, payload) => {
      const answer = await x.bot.post(kind, payload);
      expect(answer.status).toBe(200);
      return answer.body === "" ? undefined : JSON.parse(answer.body);
    };
    await linkAndAsk(x.slack, x.sim, send);
    await x.bot.kill("SIGTERM");
    expect(x.bot.logs.some((line) => line.includes('"level":20'))).toBe(true);
    expectNoToken(`${x.bot.logs.join("\n")}\n${x.bot.stderr()}`);
  });

  it("Socket Mode: is written nowhere, though every socket message is logged at debug", async () => {
    const x = await launch(true);
    await x.slack.socket.connected();
    const send: Send = async (kind, payload) => {
      const type = {
        command: "slash_commands",
        action: "interactive",
        event: "events_api",
      } as const;
      return (await x.slack.socket.send(type[kind], payload)).payload;
    };
    await linkAndAsk(x.slack, x.sim, send);
    await x.bot.kill("SIGTERM");
    // The socket's messages are in the log, the submissions among them, with the field emptied.
    const received = x.bot.logs.filter((line) =>
      line.includes("Received a message on the WebSocket"),
    );
    expect(received.filter((line) => line.includes("view_submission"))).toHaveLength(2);
    expectNoToken(`${x.bot.logs.join("\n")}\n${x.bot.stderr()}`);
  });
});

describe("what Bolt is handed", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  /** Every body Bolt's middleware sees: what any Bolt logging (developerMode's) could write. */
  function watchBodies(x: Harness): string[] {
    const seen: string[] = [];
    x.bot.app.use(async ({ body, next }) => {
      seen.push(JSON.stringify(body));
      await next();
    });
    return seen;
  }

  it.each([
    ["HTTP mode", false],
    ["Socket Mode", true],
  ])(
    "%s: a handle in the token's place, never the token, and the listener still gets it",
    async (_transport, socketMode) => {
      h = await startHarness({
        socketMode,
        env: { TOKEN_ENCRYPTION_KEY: KEY, IDENTITY_MODE: "either" },
      });
      const x = h;
      const seen = watchBodies(x);
      x.sim.control.revokeToken(REFUSED);
      const send = async (payload: Payload, type: "interactive" | "slash_commands") =>
        socketMode
          ? (await x.slack.socket.send(type, payload)).payload
          : JSON.parse(
              (
                await postToBot(
                  `${x.botUrl}/slack/events`,
                  SIGNING_SECRET,
                  type === "interactive" ? "action" : "command",
                  payload,
                )
              ).body,
            );
      expect(await send(submission(REFUSED), "interactive")).toMatchObject({
        response_action: "errors",
        errors: { token: expect.stringContaining("refused this token") },
      });
      expect(await send(submission(ACCEPTED), "interactive")).toMatchObject({
        response_action: "update",
      });
      await send(command(`link ${PASTED}`, x.slack), "slash_commands");
      expect(seen.filter((body) => body.includes(LINK_VIEW_ID))).toHaveLength(2);
      expectNoToken(seen.join("\n"));
      expectNoToken(x.logs.join("\n"));
      // The listener still had the token itself: the service was asked with it, and it is linked.
      expect(x.sim.control.requests.find((r) => r.token === ACCEPTED)).toMatchObject({
        path: "/v1/threads",
        status: 200,
      });
    },
  );
});
