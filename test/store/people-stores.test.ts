import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { memoryStores } from "../../src/store/in-memory.js";
import { openSqliteStores } from "../../src/store/sqlite/open.js";
import type { Stores } from "../../src/store/stores.js";
import { postgresStores } from "../support/postgres.js";
import { tempFolder } from "../support/temp-folder.js";

/** One suite, every implementation: linked tokens, assistant choices, threads by service id. */
const implementations: [string, (now: () => number) => Stores][] = [
  ["memory", (now) => memoryStores(now)],
  [
    "sqlite",
    (now) => {
      const stores = openSqliteStores(join(tempFolder("people-stores-"), "bridge.db"), now);
      return stores;
    },
  ],
  ["postgres", (now) => postgresStores(now)],
];

describe.each(implementations)("the %s stores of people", (_name, openStores) => {
  const open = (now: () => number = () => 1_000) => {
    const stores = openStores(now);
    return stores;
  };

  it("keep one sealed token per person of a workspace, replaced by a new link", async () => {
    let now = 1_000;
    const stores = open(() => now);
    const { linkedTokens } = stores;
    expect(await linkedTokens.get("T1", "U1")).toBeUndefined();
    await linkedTokens.put("T1", "U1", Buffer.from([1, 2, 3]));
    now = 2_000;
    await linkedTokens.put("T1", "U2", Buffer.from([4]));
    await linkedTokens.put("T2", "U1", Buffer.from([5]));
    now = 3_000;
    const replaced = await linkedTokens.put("T1", "U1", Buffer.from([9, 9]));
    expect(replaced).toEqual({
      team: "T1",
      user: "U1",
      sealed: Buffer.from([9, 9]),
      linkedAt: 3_000,
    });
    expect((await linkedTokens.get("T2", "U1"))?.sealed).toEqual(Buffer.from([5]));
    expect((await linkedTokens.all()).map((t) => `${t.team}/${t.user}`)).toEqual([
      "T1/U2",
      "T2/U1",
      "T1/U1",
    ]);
    await stores.close();
  });

  it("forget a token on unlink, saying whether there was one", async () => {
    const stores = open();
    await stores.linkedTokens.put("T1", "U1", Buffer.from([1]));
    expect(await stores.linkedTokens.remove("T1", "U1")).toBe(true);
    expect(await stores.linkedTokens.remove("T1", "U1")).toBe(false);
    expect(await stores.linkedTokens.get("T1", "U1")).toBeUndefined();
    await stores.close();
  });

  it("reseal rows in place, keeping when they were linked, and leave an unlinked row unlinked", async () => {
    const stores = open();
    await stores.linkedTokens.put("T1", "U1", Buffer.from([1]));
    await stores.linkedTokens.reseal([
      { team: "T1", user: "U1", sealed: Buffer.from([7]) },
      { team: "T1", user: "GONE", sealed: Buffer.from([8]) },
    ]);
    expect(await stores.linkedTokens.all()).toEqual([
      { team: "T1", user: "U1", sealed: Buffer.from([7]), linkedAt: 1_000 },
    ]);
    await stores.close();
  });

  it("keep the assistant chosen per channel and per person apart, and forget it on null", async () => {
    const stores = open();
    const choices = stores.assistantChoices;
    await choices.setForChannel("T1", "C1", "asst-legal");
    await choices.setForPerson("T1", "C1", "asst-hr");
    expect(await choices.forChannel("T1", "C1")).toBe("asst-legal");
    expect(await choices.forPerson("T1", "C1")).toBe("asst-hr");
    expect(await choices.forChannel("T2", "C1")).toBeUndefined();
    await choices.setForChannel("T1", "C1", "asst-ops");
    expect(await choices.forChannel("T1", "C1")).toBe("asst-ops");
    await choices.setForChannel("T1", "C1", null);
    expect(await choices.forChannel("T1", "C1")).toBeUndefined();
    expect(await choices.forPerson("T1", "C1")).toBe("asst-hr");
    await stores.close();
  });

  it("find a conversation by its service thread", async () => {
    const stores = open();
    const c = await stores.conversations.ensure(
      { team: "T1", channel: "C1", threadTs: "1.1" },
      "a",
    );
    expect(await stores.conversations.byServiceThread("th-1")).toBeUndefined();
    await stores.conversations.setServiceThread(c.id, "th-1", "shared");
    expect(await stores.conversations.byServiceThread("th-1")).toMatchObject({
      id: c.id,
      threadTs: "1.1",
    });
    await stores.close();
  });
});
