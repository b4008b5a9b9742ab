/**
 * Who may continue whose conversation: the rule as a pure function, the credential source
 * that applies it to every request, and the words a person reads when it says no.
 */
import { describe, expect, it } from "vitest";
import { describeFailure, NOT_OWNER } from "../../src/bridge/turn/turn-ending.js";
import { callerFor } from "../../src/bridge/turn/turn-step.js";
import type { IdentityMode } from "../../src/config-people.js";
import { Identities } from "../../src/people/identities.js";
import { LinkNotices, linkNote, problemNote } from "../../src/people/link-notices.js";
import { type Sender, senderFor } from "../../src/people/thread-owner.js";
import type { CallFor } from "../../src/service/credential.js";
import {
  type NotOwnerReason,
  PersonalTokenError,
  ThreadOwnerError,
} from "../../src/service/errors.js";

const ALICE = "U0ALICE";
const BOB = "U0BOB";
const REQUEST = { method: "POST", path: "/v1/thread/t1/messages" };

const shared: Sender = { kind: "shared" };
const own: Sender = { kind: "own" };
const linkFirst: Sender = { kind: "link_first" };
const notOwner = (reason: NotOwnerReason): Sender => ({ kind: "not_owner", reason });

describe("who a conversation's request is sent as", () => {
  // [mode, thread owner, asker linked?, sender], Alice asking.
  const table: [IdentityMode, string | undefined, boolean, Sender][] = [
    // `shared` mode: unchanged, everything shared.
    ["shared", undefined, false, shared],
    ["shared", undefined, true, shared],
    ["shared", BOB, true, shared],
    ["shared", "shared", false, shared],
    // A new conversation (or an owner not recorded): as before.
    ["either", undefined, true, own],
    ["either", undefined, false, shared],
    ["personal", undefined, true, own],
    ["personal", undefined, false, linkFirst],
    // Opened with the shared token: anyone allowed to use it continues it, linked or not.
    ["either", "shared", true, shared],
    ["either", "shared", false, shared],
    ["personal", "shared", true, notOwner("shared_unused")],
    // The asker's own thread.
    ["either", ALICE, true, own],
    ["personal", ALICE, true, own],
    ["either", ALICE, false, notOwner("owner_unlinked")],
    ["personal", ALICE, false, linkFirst],
    // Someone else's, whatever the asker has linked.
    ["either", BOB, true, notOwner("another_person")],
    ["either", BOB, false, notOwner("another_person")],
    ["personal", BOB, true, notOwner("another_person")],
    ["personal", BOB, false, notOwner("another_person")],
  ];
  it.each(table)("%s mode, thread of %s, linked %s", (mode, threadOwner, linked, expected) => {
    expect(senderFor({ mode, asker: ALICE, linked, threadOwner })).toEqual(expected);
  });
});

describe("the caller of a conversation's calls", () => {
  const conversation = {
    id: 1,
    team: "T1",
    channel: "C1",
    threadTs: "1.1",
    assistantId: "a",
    serviceThreadId: "th-1",
    passedThroughTs: null,
  };
  it("names the thread's owner once it is known, and only the asker before, of its workspace", () => {
    expect(callerFor(BOB, { ...conversation, serviceThreadOwner: ALICE })).toEqual({
      party: BOB,
      workspace: "T1",
      threadOwner: ALICE,
    });
    expect(callerFor(BOB, { ...conversation, serviceThreadOwner: "shared" })).toEqual({
      party: BOB,
      workspace: "T1",
      threadOwner: "shared",
    });
    // Opened before owners were recorded (or not yet opened): as the asker, as it always was.
    expect(callerFor(BOB, { ...conversation, serviceThreadOwner: null })).toEqual({
      party: BOB,
      workspace: "T1",
    });
    expect(callerFor(BOB, undefined)).toEqual({ party: BOB });
  });
});

/** What `fn` threw or its promise rejected with; fails when it did neither. */
async function thrownBy(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

/** A call for `party` of workspace T1, about `threadOwner`'s thread. */
function callFor(party: string | undefined, threadOwner?: string): CallFor {
  return {
    ...(party === undefined ? {} : { party }),
    workspace: "T1",
    ...(threadOwner === undefined ? {} : { threadOwner }),
  };
}

/**
 * Identities over a vault holding `linked` (user → token) in workspace T1, recording what it
 * was told.
 */
function identities(mode: IdentityMode, linked: Record<string, string>) {
  const told: string[] = [];
  const source = new Identities({
    mode,
    vault: {
      tokenOf: async ({ team, user }) => (team === "T1" ? linked[user] : undefined),
      unlinkIf: async () => true,
    },
    sharedToken: "shared-token",
    confirmRefusal: async () => true,
    onUnusable: (owner, reason) => told.push(`${owner.user} ${reason}`),
    onNotOwner: (asker, reason, threadOwner) =>
      told.push(`${asker.user} ${reason} of ${threadOwner}`),
  });
  return { source, told };
}

describe("the credential of each request", () => {
  it("sends a thread's requests as its owner, and nothing for anyone else", async () => {
    const { source, told } = identities("either", { [ALICE]: "alice-token" });
    // Opening a thread (no owner yet): the asker's own token, or the shared one.
    expect(await source.resolve(callFor(ALICE), REQUEST)).toMatchObject({ identity: ALICE });
    expect(await source.resolve(callFor(BOB), REQUEST)).toMatchObject({ identity: "shared" });
    // Alice's thread: hers only.
    expect(await source.resolve(callFor(ALICE, ALICE), REQUEST)).toEqual({
      identity: ALICE,
      token: "alice-token",
      personal: true,
      workspace: "T1",
    });
    const refused = await thrownBy(() => source.resolve(callFor(BOB, ALICE), REQUEST));
    expect(refused).toBeInstanceOf(ThreadOwnerError);
    expect(refused).toMatchObject({
      kind: "authentication",
      reason: "another_person",
      threadOwner: ALICE,
      path: REQUEST.path,
    });
    // A thread opened with the shared token: continued with it, linked or not.
    expect(await source.resolve(callFor(ALICE, "shared"), REQUEST)).toMatchObject({
      identity: "shared",
    });
    expect(await source.resolve(callFor(BOB, "shared"), REQUEST)).toMatchObject({
      identity: "shared",
    });
    expect(told).toEqual([`${BOB} another_person of ${ALICE}`]);
  });

  it("in either mode, does not continue the owner's thread with another token once unlinked", async () => {
    const { source, told } = identities("either", {});
    expect(await thrownBy(() => source.resolve(callFor(ALICE, ALICE), REQUEST))).toMatchObject({
      reason: "owner_unlinked",
      threadOwner: ALICE,
    });
    expect(told).toEqual([`${ALICE} owner_unlinked of ${ALICE}`]);
  });

  it("in personal mode, asks an unlinked owner to link and never sends the shared token", async () => {
    const { source, told } = identities("personal", { [BOB]: "bob-token" });
    await expect(source.resolve(callFor(ALICE, ALICE), REQUEST)).rejects.toThrow(
      PersonalTokenError,
    );
    expect(await thrownBy(() => source.resolve(callFor(BOB, "shared"), REQUEST))).toMatchObject({
      reason: "shared_unused",
    });
    expect(told).toEqual([`${ALICE} not_linked`, `${BOB} shared_unused of shared`]);
  });

  it("in shared mode, sends everything with the shared token", async () => {
    const { source, told } = identities("shared", { [ALICE]: "alice-token" });
    expect(await source.resolve(callFor(BOB, ALICE), REQUEST)).toMatchObject({
      identity: "shared",
    });
    expect(await source.resolve(callFor(ALICE, ALICE), REQUEST)).toMatchObject({
      identity: "shared",
    });
    expect(told).toEqual([]);
  });

  it("sends a person's own token only for their workspace's requests", async () => {
    const { source, told } = identities("personal", { [ALICE]: "alice-token" });
    const elsewhere = { party: ALICE, workspace: "T2" };
    expect(await source.resolve(callFor(ALICE), REQUEST)).toMatchObject({ identity: ALICE });
    await expect(source.resolve(elsewhere, REQUEST)).rejects.toThrow(PersonalTokenError);
    expect(told).toEqual([`${ALICE} not_linked`]);
    // Nor for a request that names no workspace.
    await expect(source.resolve({ party: ALICE }, REQUEST)).rejects.toThrow(PersonalTokenError);
    expect(await source.mustLink({ team: "T1", user: ALICE })).toBe(false);
    expect(await source.mustLink({ team: "T2", user: ALICE })).toBe(true);
  });

  it("sends the bot's own calls (no person) with the shared token", async () => {
    const { source } = identities("personal", {});
    expect(await source.resolve(callFor(undefined, ALICE), REQUEST)).toMatchObject({
      identity: "shared",
    });
  });
});

describe("what the person reads", () => {
  it.each(["another_person", "owner_unlinked", "shared_unused"] as const)(
    "ends a %s turn with its sentence, never the service's 404 one",
    (reason) => {
      const error = new ThreadOwnerError(reason, ALICE, REQUEST);
      expect(describeFailure(error)).toBe(NOT_OWNER[reason]);
      expect(describeFailure(error)).not.toContain("no longer knows");
    },
  );

  it("tells privately whose the conversation is, and where to ask instead", () => {
    const notices = new LinkNotices();
    notices.add({ team: "T1", user: BOB }, { reason: "another_person", threadOwner: ALICE });
    const problem = notices.take("T1", BOB);
    expect(problem).toEqual({ reason: "another_person", threadOwner: ALICE });
    expect(notices.take("T1", BOB)).toBeUndefined();
    expect(problemNote(problem as never, "help")).toBe(
      `Only <@${ALICE}> can continue this conversation: it was started with their own access to the assistant service, which keeps it for them alone. To ask the assistant yourself, start a new thread (mention me in a channel) or send me a direct message.`,
    );
    // The link problems read as before.
    expect(problemNote("not_linked", "Ask IT.")).toBe(linkNote("not_linked", "Ask IT."));
  });
});
