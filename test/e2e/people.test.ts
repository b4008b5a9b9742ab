import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PERSONAL_TOKEN } from "../../src/bridge/turn/turn-ending.js";
import {
  HOME_DM_ASSISTANT_ACTION,
  HOME_LINK_ACTION,
  HOME_UNLINK_ACTION,
} from "../../src/slack/surfaces/home-view.js";
import { LINK_VIEW_ID, LINKING_OFF } from "../../src/slack/surfaces/link-form.js";
import { NOT_ADMIN } from "../../src/slack/surfaces/people-controls.js";
import { DEFAULT_TEAM as TEAM } from "../../tools/slack-events.js";
import { blockAction } from "../../tools/slack-interactions.js";
import { viewSubmission } from "../../tools/slack-requests.js";
import {
  ASSISTANT_ID,
  CHANNEL,
  type Harness,
  SERVICE_TOKEN,
  startHarness,
  USER,
} from "../support/bridge-harness.js";
import { SkippableClock } from "../support/manual-clock.js";

const BOB = "U0BOB";
const ALICE_TOKEN = "pat-alice-0123456789abcdef";
const BOB_TOKEN = "pat-bob-0123456789abcdef";
const KEY = randomBytes(32).toString("base64");

let h: Harness;
afterEach(async () => {
  await h?.close();
});

async function start(env: Record<string, string> = {}, clock?: SkippableClock) {
  h = await startHarness({
    env: { TOKEN_ENCRYPTION_KEY: KEY, IDENTITY_MODE: "either", ...env },
    ...(clock ? { clock, slack: { now: () => clock.now() } } : {}),
  });
  h.slack.seedUser({ id: USER, name: "alice" });
  h.slack.seedUser({ id: BOB, name: "bob" });
  h.slack.seedUser({ id: "U0ADMIN", name: "ann", is_admin: true });
  return h;
}

/**
 * `/assistant link`, then the form submitted with `token`; resolves with the submission's
 * answer, once a linked person's Home is published again.
 */
async function link(user: string, token: string) {
  const before = h.slack.views.length;
  const ack = await h.command("link", { user });
  expect(ack.status).toBe(200);
  await h.slack.waitFor((s) => s.views.length > before);
  const opened = h.slack.views.at(-1)?.view as { callback_id: string; blocks: unknown[] };
  expect(opened.callback_id).toBe(LINK_VIEW_ID);
  const published = h.slack.viewState.published.length;
  const answer = await h.post(
    "action",
    viewSubmission({
      user,
      callback_id: LINK_VIEW_ID,
      values: { token: { token: { type: "plain_text_input", value: ` ${token} ` } } },
    }),
  );
  // Linked: the person's Home is published again, listing their threads with the new token.
  if (answer.body.includes('"update"')) {
    await h.slack.waitFor((s) => s.viewState.published.length > published);
  }
  return answer;
}

/** The bearer tokens of the service requests for runs, messages and threads, in order. */
const tokensOf = (path: RegExp) =>
  h.sim.control.requests
    .filter((r) => r.method === "POST" && path.test(r.path))
    .map((r) => r.token);

async function ask(user: string, text = "hello") {
  const { threadTs } = await h.mention(`<@UBOT> ${text}`, { user });
  return h.settled(CHANNEL, threadTs);
}

describe("people's own tokens, end to end", () => {
  it("links through the form after checking the token, keeps it sealed, and asks as the person", async () => {
    await start();
    const answer = await link(USER, ALICE_TOKEN);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ response_action: "update" });
    expect(answer.body).not.toContain(ALICE_TOKEN);
    // Checked with one cheap authenticated request, as Alice.
    const check = h.sim.control.requests.find(
      (r) => r.path === "/v1/threads" && r.token === ALICE_TOKEN,
    );
    expect(check?.status).toBe(200);

    await ask(USER);
    await ask(BOB);
    expect(tokensOf(/^\/v1\/thread$/)).toEqual([ALICE_TOKEN, SERVICE_TOKEN]);
    expect(tokensOf(/\/messages$/)).toEqual([ALICE_TOKEN, SERVICE_TOKEN]);
    expect(tokensOf(/\/runs$/)).toEqual([ALICE_TOKEN, SERVICE_TOKEN]);

    // Every request is logged with its identity, and no line carries the token.
    const logged = h.logs.filter((l) => l.includes('"service request"'));
    expect(logged.some((l) => l.includes(`"identity":"${USER}"`))).toBe(true);
    expect(logged.some((l) => l.includes('"identity":"shared"'))).toBe(true);
    expect(h.logs.join("\n")).not.toContain(ALICE_TOKEN);

    // At rest only sealed: no file of the database holds the token's bytes.
    const folder = dirname(h.databasePath);
    for (const name of readdirSync(folder)) {
      expect(readFileSync(join(folder, name)).includes(Buffer.from(ALICE_TOKEN))).toBe(false);
    }
  });

  it("shows a refused token in the form and keeps nothing", async () => {
    await start();
    h.sim.control.revokeToken("pat-bad-token-000");
    const answer = await link(USER, "pat-bad-token-000");
    expect(JSON.parse(answer.body)).toEqual({
      response_action: "errors",
      errors: {
        token:
          "The assistant service refused this token. Check that it is complete and still valid.",
      },
    });
    await ask(USER);
    expect(tokensOf(/\/runs$/)).toEqual([SERVICE_TOKEN]);
  });

  it("forgets the token on unlink: the next question goes with the shared token", async () => {
    await start();
    await link(USER, ALICE_TOKEN);
    const unlinked = await h.command("unlink");
    expect(JSON.parse(unlinked.body).text).toContain("Your access token is forgotten.");
    await ask(USER);
    expect(tokensOf(/\/runs$/)).toEqual([SERVICE_TOKEN]);
  });

  it("in personal mode tells an unlinked person how to link, privately, and sends nothing", async () => {
    await start({ IDENTITY_MODE: "personal" });
    await h.mention("<@UBOT> hello", { user: BOB });
    await h.slack.waitFor((s) => s.ephemerals.length === 1);
    expect(h.slack.ephemerals[0]).toMatchObject({ user: BOB, channel: CHANNEL });
    expect(h.slack.ephemerals[0]?.text).toContain("/assistant link");
    await h.bot.bridge.idle();
    expect(h.sim.control.requests).toEqual([]);
  });

  it("unlinks a token the service refuses once the refusal is confirmed: told privately, one sentence, never the shared token in its place", async () => {
    await start({ IDENTITY_MODE: "personal" });
    await link(USER, ALICE_TOKEN);
    const linked = h.sim.control.requests.length;
    h.sim.control.revokeToken(ALICE_TOKEN);
    const transcript = await ask(USER);
    expect(transcript.join("\n")).toContain(PERSONAL_TOKEN.refused);
    await h.slack.waitFor((s) => s.ephemerals.some((e) => e.user === USER));
    expect(h.slack.ephemerals.find((e) => e.user === USER)?.text).toContain("no longer linked");
    // Confirmed before forgetting: Alice's token refused again, the shared token accepted by
    // the same cheap request; the shared token carried nothing of Alice's.
    const asked = h.sim.control.requests
      .slice(linked)
      .map((r) => [r.method, r.path, r.token === ALICE_TOKEN ? "alice" : "shared", r.status]);
    expect(asked).toEqual([
      ["POST", "/v1/thread", "alice", 401],
      ["GET", "/v1/threads", "alice", 401],
      ["GET", "/v1/threads", "shared", 200],
    ]);
    expect(await h.bot.stores.linkedTokens.get(TEAM, USER)).toBeUndefined();
    // Unlinked now: the next message is refused before any request.
    const sent = h.sim.control.requests.length;
    await h.mention("<@UBOT> again");
    await h.slack.waitFor((s) => s.ephemerals.filter((e) => e.user === USER).length === 2);
    expect(h.sim.control.requests.length).toBe(sent);
  });

  it("keeps every linked token through a service-wide 401 burst, and tells each person to try again", async () => {
    await start({ IDENTITY_MODE: "personal" });
    await link(USER, ALICE_TOKEN);
    await link(BOB, BOB_TOKEN);
    // The service refuses every token for a while, the shared one included.
    h.sim.control.refuseEveryToken(true);
    const before = h.sim.control.requests.length;
    for (const user of [USER, BOB]) {
      const transcript = await ask(user);
      expect(transcript.join("\n")).toContain(PERSONAL_TOKEN.refused_kept);
    }
    // Each refusal was checked (the person's token, then the shared one) and not confirmed.
    const checks = h.sim.control.requests
      .slice(before)
      .filter((r) => r.path === "/v1/threads")
      .map((r) => [r.token, r.status]);
    expect(checks).toEqual([
      [ALICE_TOKEN, 401],
      [SERVICE_TOKEN, 401],
      [BOB_TOKEN, 401],
      [SERVICE_TOKEN, 401],
    ]);
    expect(await h.bot.stores.linkedTokens.get(TEAM, USER)).toBeDefined();
    expect(await h.bot.stores.linkedTokens.get(TEAM, BOB)).toBeDefined();
    expect(h.slack.ephemerals.filter((e) => e.text?.includes("no longer linked"))).toEqual([]);

    // Over: both ask again with their own tokens, still linked.
    h.sim.control.refuseEveryToken(false);
    await ask(USER, "again");
    await ask(BOB, "again");
    expect(tokensOf(/\/runs$/)).toEqual([ALICE_TOKEN, BOB_TOKEN]);
  });

  it("keeps a token refused once and accepted when checked, and says so", async () => {
    await start({ IDENTITY_MODE: "personal" });
    await link(USER, ALICE_TOKEN);
    h.sim.control.failRequests({
      count: 1,
      status: 401,
      method: "POST",
      pathPattern: /^\/v1\/thread$/,
    });
    expect((await ask(USER)).join("\n")).toContain(PERSONAL_TOKEN.refused_kept);
    expect(await h.bot.stores.linkedTokens.get(TEAM, USER)).toBeDefined();
    // Accepted when checked: the shared token was not even asked.
    expect(h.sim.control.requests.filter((r) => r.token === SERVICE_TOKEN)).toEqual([]);
    await ask(USER, "again");
    expect(tokensOf(/\/runs$/)).toEqual([ALICE_TOKEN]);
  });

  it("says linking is off without a key", async () => {
    h = await startHarness();
    const answer = await h.command("link");
    expect(JSON.parse(answer.body).text).toBe(LINKING_OFF);
  });
});

describe("a choice of assistants", () => {
  it("lets an admin set a channel's assistant, refuses others, and a conversation keeps its own", async () => {
    await start({ ASSISTANTS: `${ASSISTANT_ID}=General,asst-legal=Legal` });
    const first = await h.mention("<@UBOT> before");
    await h.settled(CHANNEL, first.threadTs);

    const refused = await h.command("use Legal", { user: BOB });
    expect(JSON.parse(refused.body).text).toBe(NOT_ADMIN);
    const set = await h.command("use legal", { user: "U0ADMIN" });
    expect(JSON.parse(set.body).text).toContain("now talk to *Legal*");
    const status = await h.command("status");
    expect(JSON.parse(status.body).text).toContain(
      "Assistant for new conversations here: *Legal*.",
    );

    await ask(USER, "new thread");
    await h.mention("<@UBOT> continue", { thread_ts: first.threadTs });
    await h.settled(CHANNEL, first.threadTs, 2);
    const opened = h.sim.control.threads().map((t) => t.assistantId);
    expect(opened).toEqual([ASSISTANT_ID, "asst-legal"]);
    expect(h.sim.control.threads()).toHaveLength(2);
  });
});

describe("the App Home", () => {
  it("shows a person with 450 threads one page, within 100 blocks, linked to known Slack threads", async () => {
    await start();
    await link(USER, ALICE_TOKEN);
    for (let i = 0; i < 450; i++) h.sim.control.createThread(ALICE_TOKEN, ASSISTANT_ID, `old ${i}`);
    // The newest: started in Slack, so the bot knows its thread.
    const { threadTs } = await h.mention("<@UBOT> in slack");
    await h.settled(CHANNEL, threadTs);
    const before = h.slack.viewState.published.length;
    await h.deliver({
      type: "app_home_opened",
      user: USER,
      channel: "D0ALICE",
      tab: "home",
      event_ts: "1.1",
    });
    await h.slack.waitFor((s) => s.viewState.published.length > before);
    const home = h.slack.viewState.published.at(-1);
    expect(home?.user_id).toBe(USER);
    const blocks = home?.view.blocks as unknown[];
    expect(blocks.length).toBeLessThanOrEqual(100);
    const shown = JSON.stringify(blocks);
    expect(shown).toContain("Page 1 of 31 · 451 conversations");
    expect(shown).toContain("old 449");
    expect(shown).not.toContain("old 434");
    expect(shown).toContain(`archives/${CHANNEL}/p${threadTs.replace(".", "")}`);
    expect(shown).toContain('"action_id":"home_unlink"');
    const listed = h.sim.control.requests.filter(
      (r) => r.path === "/v1/threads" && r.token === ALICE_TOKEN,
    );
    expect(listed.at(-1)?.query.assistantId).toBe(ASSISTANT_ID);
  });
});

describe("budgets that follow identity", () => {
  it("gives each linked person their own 20 run starts a minute: one's burst of 30 does not delay another", async () => {
    // Room for one person's thirty questions at once (past it they would get a note instead).
    await start({ MAX_QUEUED_TURNS_PER_PERSON: "40" });
    await link(USER, ALICE_TOKEN);
    await link(BOB, BOB_TOKEN);
    h.sim.control.setDefaultAnswer({ text: "Short answer." });
    for (let i = 0; i < 30; i++) await h.mention(`<@UBOT> question ${i}`, { user: USER });
    const runsBy = (token: string) =>
      h.sim.control.requests.filter(
        (r) => r.method === "POST" && /\/runs$/.test(r.path) && r.token === token,
      );
    await h.slack.waitFor(() => runsBy(ALICE_TOKEN).length === 20);
    // Alice's 21st to 30th wait in her own queue for the next minute; Bob's question does not.
    // (Asked in another channel: in hers, his answer's message would wait its turn behind the
    // messages of hers that Slack's post a second has not made yet, and its run with it.)
    await h.mention("<@UBOT> my turn?", { user: BOB, channel: "C_OTHER" });
    await h.slack.waitFor(() => runsBy(BOB_TOKEN).length === 1, 3_000);
    // Nobody's start went past the service's limit: no 429 for either token.
    expect(runsBy(ALICE_TOKEN)).toHaveLength(20);
    expect(h.sim.control.requests.filter((r) => r.status === 429)).toEqual([]);
  });
});

describe("unlinking while a question waits", () => {
  it("sends nothing more with the token: the waiting run start finds it gone and the answer says so", async () => {
    const clock = new SkippableClock();
    // One run start a minute for the bot: the second question waits its turn in Alice's lane.
    await start({ IDENTITY_MODE: "personal", ASSISTANT_RUN_STARTS_PER_MINUTE: "1" }, clock);
    await link(USER, ALICE_TOKEN);
    h.sim.control.setDefaultAnswer({ text: "Still thinking", hang: true });
    await h.mention("<@UBOT> first", { user: USER });
    const second = await h.mention("<@UBOT> second", { user: USER });
    const posted = () =>
      h.sim.control.requests.filter((r) => r.method === "POST" && /\/messages$/.test(r.path));
    // Both questions posted, and the first one's run started: the second's start waits.
    await h.slack.waitFor(() => posted().length === 2 && h.sim.control.runs().length === 1);
    const before = h.sim.control.requests.length;

    const unlinked = await h.command("unlink");
    expect(JSON.parse(unlinked.body).text).toContain("Your access token is forgotten.");
    clock.skip(61_000);
    await h.slack.waitFor((s) =>
      s
        .threadTranscript(CHANNEL, second.threadTs)
        .some((t) => t.includes(PERSONAL_TOKEN.not_linked)),
    );
    // The waiting run start was never sent, with Alice's token or any other.
    const after = h.sim.control.requests.slice(before);
    expect(after.filter((r) => /\/runs$/.test(r.path))).toEqual([]);
    expect(after.filter((r) => r.token === ALICE_TOKEN && r.method === "POST")).toEqual([]);
    expect(h.sim.control.runs()).toHaveLength(1);
  });
});

describe("the App Home's controls", () => {
  /** A press in the Home tab: a block action whose container is the Home view. */
  async function press(action_id: string, more: Record<string, unknown> = {}): Promise<void> {
    const payload = blockAction({
      user: USER,
      channel: "D0ALICE",
      message_ts: "1.1",
      action_id,
      value: action_id,
      trigger_id: `trigger-${action_id}`,
    });
    const actions = payload.actions as Record<string, unknown>[];
    Object.assign(actions[0] as Record<string, unknown>, more);
    const answer = await h.post("action", { ...payload, container: { type: "view" } });
    expect(answer.status).toBe(200);
  }

  it("opens the link form, unlinks, and sets the person's assistant for direct messages", async () => {
    await start({ ASSISTANTS: `${ASSISTANT_ID}=Standard,asst-research=Research` });
    await press(HOME_LINK_ACTION);
    await h.slack.waitFor((s) => s.views.length === 1);
    expect(h.slack.views[0]).toMatchObject({
      trigger_id: `trigger-${HOME_LINK_ACTION}`,
      view: { callback_id: LINK_VIEW_ID },
    });

    await link(USER, ALICE_TOKEN);
    await press(HOME_UNLINK_ACTION);
    // The Home is published again showing the Link button.
    const lastHome = () => JSON.stringify(h.slack.viewState.published.at(-1)?.view ?? {});
    await h.slack.waitFor(() => lastHome().includes(`"action_id":"${HOME_LINK_ACTION}"`));
    await ask(USER);
    expect(tokensOf(/\/runs$/)).toEqual([SERVICE_TOKEN]);

    await press(HOME_DM_ASSISTANT_ACTION, {
      type: "static_select",
      selected_option: { value: "asst-research", text: { type: "plain_text", text: "Research" } },
    });
    await h.slack.waitFor(() =>
      lastHome().includes('"initial_option":{"text":{"type":"plain_text","text":"Research"}'),
    );
    await h.message({ channel: "D0ALICE", channel_type: "im", text: "hello in private" });
    await h.slack.waitFor(() => tokensOf(/^\/v1\/thread$/).length === 2);
    const opened = h.sim.control.requests.filter(
      (r) => r.method === "POST" && r.path === "/v1/thread",
    );
    expect(opened.map((r) => (r.body as { assistantId?: string }).assistantId)).toEqual([
      ASSISTANT_ID,
      "asst-research",
    ]);
  });
});
