/**
 * Two people in one Slack thread, with IDENTITY_MODE either and personal: the service keeps a
 * thread for the token that created it, so the conversation's requests are sent as its owner,
 * and someone who may not continue it is told so without any request reaching the service.
 */
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { NOT_OWNER } from "../../src/bridge/turn/turn-ending.js";
import { LINK_VIEW_ID } from "../../src/slack/surfaces/link-form.js";
import { viewSubmission } from "../../tools/slack-requests.js";
import {
  CHANNEL,
  type Harness,
  SERVICE_TOKEN,
  startHarness,
  USER,
} from "../support/bridge-harness.js";

const ALICE = USER;
const BOB = "U0BOB";
const ALICE_TOKEN = "pat-alice-0123456789abcdef";
const BOB_TOKEN = "pat-bob-fedcba9876543210";
const KEY = randomBytes(32).toString("base64");

const NOT_ALICES = `Only <@${ALICE}> can continue this conversation: it was started with their own access to the assistant service, which keeps it for them alone. To ask the assistant yourself, start a new thread (mention me in a channel) or send me a direct message.`;
const OWN_UNLINKED =
  "This conversation was started with your own access token, which is no longer linked, and the assistant service keeps it for that token alone. Link it again with `/assistant link` to continue here, or start a new thread (or send me a direct message) to ask without it.";

let h: Harness;
afterEach(async () => {
  await h?.close();
});

async function start(mode: "either" | "personal") {
  h = await startHarness({ env: { TOKEN_ENCRYPTION_KEY: KEY, IDENTITY_MODE: mode } });
  h.slack.seedUser({ id: ALICE, name: "alice" });
  h.slack.seedUser({ id: BOB, name: "bob" });
  return h;
}

/** `/assistant link`, then the form submitted with `token`; resolves once the Home shows it. */
async function link(user: string, token: string) {
  const before = h.slack.views.length;
  const homes = h.slack.viewState.published.length;
  await h.command("link", { user });
  await h.slack.waitFor((s) => s.views.length > before);
  const answer = await h.post(
    "action",
    viewSubmission({
      user,
      callback_id: LINK_VIEW_ID,
      values: { token: { token: { type: "plain_text_input", value: token } } },
    }),
  );
  expect(JSON.parse(answer.body)).toMatchObject({ response_action: "update" });
  // Linking publishes the person's Home again, which lists their threads: done before a test
  // counts the service requests of a question.
  await h.slack.waitFor((s) => s.viewState.published.length > homes);
}

/** `/assistant unlink`; resolves once the Home shows it (it lists threads again). */
async function unlink(user: string) {
  const homes = h.slack.viewState.published.length;
  const answer = await h.command("unlink", { user });
  expect(JSON.parse(answer.body).text).toContain("Your access token is forgotten.");
  await h.slack.waitFor((s) => s.viewState.published.length > homes);
}

/** The service requests made from now on, as `METHOD path token` lines (ids elided). */
function requestsFrom(): () => string[] {
  const from = h.sim.control.requests.length;
  return () =>
    h.sim.control.requests
      .slice(from)
      .map((r) => `${r.method} ${r.path.replace(/[0-9a-f-]{36}/g, ":id")} ${r.token}`);
}

/** A person asks in the thread (a reply, no mention: the thread has a conversation). */
async function reply(user: string, text: string, threadTs: string, count: number) {
  await h.message({ text, user, thread_ts: threadTs });
  return h.settled(CHANNEL, threadTs, count);
}

const notesTo = (user: string) =>
  h.slack.ephemerals.filter((e) => e.user === user).map((e) => e.text);

/** The requests of one answered question, every one with `token`. */
const answeredAs = (token: string, opened: boolean) => [
  ...(opened ? [`POST /v1/thread ${token}`] : []),
  `POST /v1/thread/:id/messages ${token}`,
  `POST /v1/thread/:id/runs ${token}`,
];

describe("a conversation continued by its owner only (IDENTITY_MODE=either)", () => {
  it("sends nothing for someone else in a person's thread, tells them privately, and lets the owner go on", async () => {
    await start("either");
    await link(ALICE, ALICE_TOKEN);
    let seen = requestsFrom();
    const { threadTs } = await h.mention("<@UBOT> first question");
    const [first] = await h.settled(CHANNEL, threadTs);
    expect(first).not.toMatch(/^:warning:/);
    expect(seen().filter((r) => r.startsWith("POST"))).toEqual(answeredAs(ALICE_TOKEN, true));
    expect(seen().every((r) => r.endsWith(ALICE_TOKEN))).toBe(true);
    const opened = h.sim.control.threads()[0]?.id as string;
    expect(await h.bot.stores.conversations.byServiceThread(opened)).toMatchObject({
      threadTs,
      serviceThreadOwner: ALICE,
    });

    // Bob, with no token of his own, writes in Alice's thread: nothing reaches the service.
    seen = requestsFrom();
    const transcript = await reply(BOB, "may I ask too?", threadTs, 2);
    expect(transcript[1]).toBe(`:warning: ${NOT_OWNER.another_person}`);
    await h.slack.waitFor((s) => s.ephemerals.some((e) => e.user === BOB));
    expect(seen()).toEqual([]);
    expect(notesTo(BOB)).toEqual([NOT_ALICES]);
    expect(h.slack.ephemerals.find((e) => e.user === BOB)).toMatchObject({
      channel: CHANNEL,
      thread_ts: threadTs,
    });
    expect(transcript.join("\n")).not.toContain("no longer knows");

    // Linked, Bob still may not: the thread is Alice's token's.
    await link(BOB, BOB_TOKEN);
    seen = requestsFrom();
    const again = await reply(BOB, "and now?", threadTs, 3);
    expect(again[2]).toBe(`:warning: ${NOT_OWNER.another_person}`);
    expect(seen()).toEqual([]);

    // Alice goes on in her thread, with her own token.
    seen = requestsFrom();
    const after = await reply(ALICE, "second question", threadTs, 4);
    expect(after[3]).not.toMatch(/^:warning:/);
    expect(seen().filter((r) => r.startsWith("POST"))).toEqual(answeredAs(ALICE_TOKEN, false));
    expect(seen().every((r) => r.endsWith(ALICE_TOKEN))).toBe(true);
    expect(notesTo(ALICE)).toEqual([]);
  });

  it("lets anyone continue a conversation started with the shared token, with the shared token, linked or not", async () => {
    await start("either");
    await link(ALICE, ALICE_TOKEN);
    let seen = requestsFrom();
    // Bob has no token: his thread is opened with the shared one.
    const { threadTs } = await h.mention("<@UBOT> a shared question", { user: BOB });
    await h.settled(CHANNEL, threadTs);
    expect(seen().filter((r) => r.startsWith("POST"))).toEqual(answeredAs(SERVICE_TOKEN, true));
    const opened = h.sim.control.threads()[0]?.id as string;
    expect((await h.bot.stores.conversations.byServiceThread(opened))?.serviceThreadOwner).toBe(
      "shared",
    );

    // Alice, linked, continues it with the shared token, not her own.
    seen = requestsFrom();
    const transcript = await reply(ALICE, "following up", threadTs, 2);
    expect(transcript[1]).not.toMatch(/^:warning:/);
    expect(seen().filter((r) => r.startsWith("POST"))).toEqual(answeredAs(SERVICE_TOKEN, false));
    expect(seen().every((r) => r.endsWith(SERVICE_TOKEN))).toBe(true);
    expect(h.slack.ephemerals).toEqual([]);
  });

  it("stops a run with the token of the thread it runs in, not the asker's own", async () => {
    await start("either");
    await link(ALICE, ALICE_TOKEN);
    const { threadTs } = await h.mention("<@UBOT> a shared question", { user: BOB });
    await h.settled(CHANNEL, threadTs);
    // Alice continues Bob's shared thread with an answer that runs until stopped.
    h.sim.control.enqueueAnswer({ text: "partial", hang: true, tokensPerSecond: Infinity });
    await h.message({ text: "a long one", user: ALICE, thread_ts: threadTs });
    await h.slack.waitFor((s) => s.replies(CHANNEL, threadTs).length === 2);
    await new Promise<void>((resolve) => {
      const working = () => h.sim.control.runs().some((r) => r.status === "in_progress");
      if (working()) return resolve();
      const check = () => {
        if (!working()) return;
        h.sim.control.events.off("run-status", check);
        resolve();
      };
      h.sim.control.events.on("run-status", check);
    });
    const seen = requestsFrom();
    const stopped = await h.command("stop", { user: ALICE });
    expect(JSON.parse(stopped.body).text).toContain("Stopping your");
    const transcript = await h.settled(CHANNEL, threadTs, 2);
    expect(transcript[1]).toContain("Stopped by");
    expect(seen().filter((r) => r.includes("/stop"))).toEqual([
      `POST /v1/runs/:id/stop ${SERVICE_TOKEN}`,
    ]);
  });

  it("does not continue the owner's thread with the shared token once they unlinked", async () => {
    await start("either");
    await link(ALICE, ALICE_TOKEN);
    const { threadTs } = await h.mention("<@UBOT> first question");
    await h.settled(CHANNEL, threadTs);
    await unlink(ALICE);

    const seen = requestsFrom();
    const transcript = await reply(ALICE, "still there?", threadTs, 2);
    expect(transcript[1]).toBe(`:warning: ${NOT_OWNER.owner_unlinked}`);
    await h.slack.waitFor((s) => s.ephemerals.some((e) => e.user === ALICE));
    expect(seen()).toEqual([]);
    expect(notesTo(ALICE)).toEqual([OWN_UNLINKED]);

    // A new thread goes with the shared token.
    const fresh = requestsFrom();
    const next = await h.mention("<@UBOT> a new thread");
    await h.settled(CHANNEL, next.threadTs);
    expect(fresh().filter((r) => r.startsWith("POST"))).toEqual(answeredAs(SERVICE_TOKEN, true));
  });
});

describe("a conversation continued by its owner only (IDENTITY_MODE=personal)", () => {
  it("refuses another linked person in a person's thread without a request, and the owner goes on", async () => {
    await start("personal");
    await link(ALICE, ALICE_TOKEN);
    await link(BOB, BOB_TOKEN);
    const { threadTs } = await h.mention("<@UBOT> first question");
    await h.settled(CHANNEL, threadTs);

    let seen = requestsFrom();
    const transcript = await reply(BOB, "my turn", threadTs, 2);
    expect(transcript[1]).toBe(`:warning: ${NOT_OWNER.another_person}`);
    await h.slack.waitFor((s) => s.ephemerals.some((e) => e.user === BOB));
    expect(seen()).toEqual([]);
    expect(notesTo(BOB)).toEqual([NOT_ALICES]);

    seen = requestsFrom();
    const after = await reply(ALICE, "second question", threadTs, 3);
    expect(after[2]).not.toMatch(/^:warning:/);
    expect(seen().filter((r) => r.startsWith("POST"))).toEqual(answeredAs(ALICE_TOKEN, false));
    expect(seen().every((r) => r.endsWith(ALICE_TOKEN))).toBe(true);
    // Bob's own thread is his.
    seen = requestsFrom();
    const own = await h.mention("<@UBOT> my own thread", { user: BOB });
    await h.settled(CHANNEL, own.threadTs);
    expect(seen().filter((r) => r.startsWith("POST"))).toEqual(answeredAs(BOB_TOKEN, true));
  });

  it("asks an owner who unlinked to link again (the existing path), sending nothing", async () => {
    await start("personal");
    await link(ALICE, ALICE_TOKEN);
    const { threadTs } = await h.mention("<@UBOT> first question");
    await h.settled(CHANNEL, threadTs);
    await unlink(ALICE);
    const seen = requestsFrom();
    await h.message({ text: "still there?", user: ALICE, thread_ts: threadTs });
    await h.slack.waitFor((s) => s.ephemerals.some((e) => e.user === ALICE));
    await h.bot.bridge.idle();
    expect(seen()).toEqual([]);
    expect(notesTo(ALICE)[0]).toContain("/assistant link");
  });
});
