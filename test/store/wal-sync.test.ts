import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { WalSync } from "../../src/store/sqlite/wal-sync.js";

let dir: string | undefined;
let wal: WalSync | undefined;

afterEach(async () => {
  await wal?.close();
  wal = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** A log file and a WalSync over it whose syncs finish only when the test says. */
function heldSyncs() {
  dir = mkdtempSync(join(tmpdir(), "wal-sync-"));
  const path = join(dir, "bridge.db");
  writeFileSync(`${path}-wal`, "log");
  const pending: (() => void)[] = [];
  let syncs = 0;
  wal = new WalSync(path, {
    everyMs: 3_600_000,
    sync: () => {
      syncs++;
      return new Promise<void>((resolve) => pending.push(resolve));
    },
  });
  const finishNext = async () => {
    // The sync starts once the log is open: wait for it to be asked for.
    await expect.poll(() => pending.length).toBeGreaterThan(0);
    pending.shift()?.();
  };
  return { wal, finishNext, syncs: () => syncs };
}

describe("the SQLite log's sync", () => {
  it("serves the flushes asked while a sync runs with one more, begun at once, shared by those asked together", async () => {
    const { wal: log, finishNext, syncs } = heldSyncs();
    const done: string[] = [];
    const first = log.flush().then(() => done.push("first"));
    await expect.poll(syncs).toBe(1);
    // Asked while the first sync runs: their commits may have missed it.
    const later = [log.flush(), log.flush(), log.flush()].map((p, i) =>
      p.then(() => done.push(`later ${i}`)),
    );
    // Not behind the first: begun before it ends.
    await expect.poll(syncs).toBe(2);
    await finishNext();
    await first;
    expect(done).toEqual(["first"]);
    await finishNext();
    await Promise.all(later);
    expect(done).toEqual(["first", "later 0", "later 1", "later 2"]);
    expect(syncs()).toBe(2);
  });

  it("tells a failed sync to those who wait for it, and syncs again on the next flush", async () => {
    dir = mkdtempSync(join(tmpdir(), "wal-sync-"));
    const path = join(dir, "bridge.db");
    writeFileSync(`${path}-wal`, "log");
    let fail = true;
    wal = new WalSync(path, {
      everyMs: 3_600_000,
      sync: async () => {
        if (fail) throw Object.assign(new Error("input/output error"), { code: "EIO" });
      },
    });
    await expect(wal.flush()).rejects.toThrow("input/output error");
    fail = false;
    await expect(wal.flush()).resolves.toBeUndefined();
  });

  it("has nothing to sync before the log exists", async () => {
    dir = mkdtempSync(join(tmpdir(), "wal-sync-"));
    let syncs = 0;
    wal = new WalSync(join(dir, "bridge.db"), {
      everyMs: 3_600_000,
      sync: async () => {
        syncs++;
      },
    });
    await wal.flush();
    expect(syncs).toBe(0);
  });
});
