/**
 * The App Home of a person without a token of their own: their conversations are listed with
 * the shared token, whose list holds everyone's threads, so only the threads of conversations
 * they asked in are shown, paged and within Slack's 100 blocks.
 */
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { blockAction } from "../../tools/slack-requests.js";
import {
  ASSISTANT_ID,
  CHANNEL,
  type Harness,
  SERVICE_TOKEN,
  startHarness,
  USER,
} from "../support/bridge-harness.js";

const BOB = "U0BOB";
const CAROL = "U0CAROL";
const KEY = randomBytes(32).toString("base64");

let h: Harness;
afterEach(async () => {
  await h?.close();
});

async function start(env: Record<string, string>) {
  h = await startHarness({ env });
  for (const [id, name] of [
    [USER, "alice"],
    [BOB, "bob"],
    [CAROL, "carol"],
  ] as const) {
    h.slack.seedUser({ id, name });
  }
  return h;
}

/** Opens `user`'s Home; resolves with its blocks as text once published. */
async function home(user: string): Promise<{ blocks: unknown[]; shown: string }> {
  const before = h.slack.viewState.published.length;
  await h.deliver({
    type: "app_home_opened",
    user,
    channel: "D0HOME",
    tab: "home",
    event_ts: "1.1",
  });
  await h.slack.waitFor((s) => s.viewState.published.length > before);
  const published = h.slack.viewState.published.at(-1);
  expect(published?.user_id).toBe(user);
  const blocks = published?.view.blocks as unknown[];
  return { blocks, shown: JSON.stringify(blocks) };
}

/** The service thread the conversation of this Slack thread talks to. */
async function serviceThreadOf(threadTs: string): Promise<{ id: string; team: string }> {
  for (const thread of h.sim.control.threads()) {
    const conversation = await h.bot.stores.conversations.byServiceThread(thread.id);
    if (conversation?.threadTs === threadTs) return { id: thread.id, team: conversation.team };
  }
  throw new Error(`no service thread for ${threadTs}`);
}

const link = (threadTs: string) => `archives/${CHANNEL}/p${threadTs.replace(".", "")}`;

const listings = (token: string) =>
  h.sim.control.requests.filter((r) => r.path === "/v1/threads" && r.token === token);

describe("the App Home of a person without a token of their own", () => {
  it("lists, with the shared token, only the threads of conversations they asked in", async () => {
    await start({ TOKEN_ENCRYPTION_KEY: KEY, IDENTITY_MODE: "either" });
    // Bob's own thread, and Carol's, in which Bob asks too: both are conversations he asked in.
    const bobs = await h.mention("<@UBOT> bob's question", { user: BOB });
    await h.settled(CHANNEL, bobs.threadTs);
    const carols = await h.mention("<@UBOT> carol's question", { user: CAROL });
    await h.settled(CHANNEL, carols.threadTs);
    await h.message({ text: "bob joins in", user: BOB, thread_ts: carols.threadTs });
    await h.settled(CHANNEL, carols.threadTs, 2);
    // Alice's thread, without Bob.
    const alices = await h.mention("<@UBOT> alice's question");
    await h.settled(CHANNEL, alices.threadTs);
    // Everyone else's threads under the shared token, and 18 more conversations of Bob's.
    const { team } = await serviceThreadOf(bobs.threadTs);
    for (let i = 0; i < 400; i++)
      h.sim.control.createThread(SERVICE_TOKEN, ASSISTANT_ID, `other ${i}`);
    for (let i = 0; i < 18; i++) {
      const thread = h.sim.control.createThread(SERVICE_TOKEN, ASSISTANT_ID, `bob's old ${i}`);
      const key = { team, channel: "C0OLD", threadTs: `100.${i}` };
      const conversation = await h.bot.stores.conversations.ensure(key, ASSISTANT_ID);
      await h.bot.stores.conversations.setServiceThread(conversation.id, thread.id, "shared");
      const turn = (
        await h.bot.stores.turns.record({
          conversation: conversation,
          assistant: conversation.assistantId,
          ...key,
          messageTs: key.threadTs,
          user: BOB,
          content: "old question",
          notes: [],
        })
      ).turn;
      await h.bot.stores.turns.finish(turn?.id as string, { outcome: "completed" });
    }

    const first = await home(BOB);
    expect(first.blocks.length).toBeLessThanOrEqual(100);
    expect(first.shown).toContain("Page 1 of 2 · 20 conversations");
    // Newest first: Bob's 18 old ones were created last, then the rest come on page 2.
    expect(first.shown).toContain("bob's old 17");
    expect(first.shown).not.toContain("other ");
    expect(first.shown).not.toContain(link(alices.threadTs));
    expect(first.shown).not.toContain(link(bobs.threadTs));
    expect(listings(SERVICE_TOKEN).at(-1)?.query.assistantId).toBe(ASSISTANT_ID);

    // The older page: Bob's two Slack threads (Carol's, and his own), and nobody else's.
    expect(first.shown).toContain('"action_id":"home_threads_page_older"');
    const before = h.slack.viewState.published.length;
    await h.post(
      "action",
      blockAction({
        user: BOB,
        channel: "D0HOME",
        message_ts: "1.1",
        action_id: "home_threads_page_older",
        value: JSON.stringify({ page: 1, filter: ASSISTANT_ID }),
      }),
    );
    await h.slack.waitFor((s) => s.viewState.published.length > before);
    const second = JSON.stringify(h.slack.viewState.published.at(-1)?.view.blocks);
    expect(second).toContain("Page 2 of 2 · 20 conversations");
    expect(second).toContain(link(bobs.threadTs));
    expect(second).toContain(link(carols.threadTs));
    expect(second).not.toContain(link(alices.threadTs));
    expect(second).not.toContain("other ");
    // The three oldest of Bob's 18 fill the page; of the Slack channel, only his two.
    expect(second.match(new RegExp(`archives/${CHANNEL}/`, "g"))).toHaveLength(2);
    expect(second.match(/archives\/C0OLD\//g)).toHaveLength(3);
  });

  it("asks the service nothing for a person who never asked", async () => {
    await start({ TOKEN_ENCRYPTION_KEY: KEY, IDENTITY_MODE: "either" });
    const { threadTs } = await h.mention("<@UBOT> alice's question");
    await h.settled(CHANNEL, threadTs);
    const { shown } = await home(CAROL);
    expect(shown).toContain("No conversations with");
    expect(listings(SERVICE_TOKEN)).toEqual([]);
  });

  it("lists them the same way with linking off (IDENTITY_MODE=shared)", async () => {
    await start({});
    const mine = await h.mention("<@UBOT> mine", { user: BOB });
    await h.settled(CHANNEL, mine.threadTs);
    const theirs = await h.mention("<@UBOT> theirs", { user: CAROL });
    await h.settled(CHANNEL, theirs.threadTs);
    const { shown } = await home(BOB);
    expect(shown).toContain("Page 1 of 1 · 1 conversation with");
    expect(shown).toContain(link(mine.threadTs));
    expect(shown).not.toContain(link(theirs.threadTs));
  });

  it("in personal mode, asks an unlinked person to link instead", async () => {
    await start({ TOKEN_ENCRYPTION_KEY: KEY, IDENTITY_MODE: "personal" });
    const { shown } = await home(BOB);
    expect(shown).toContain("Link your own access token to see your conversations");
    expect(h.sim.control.requests).toEqual([]);
  });
});
