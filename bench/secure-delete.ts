/**
 * `npx tsx bench/secure-delete.ts [--turns N]`: what SQLite's `secure_delete` (store/sqlite/
 * db.ts) costs, on this machine's disk, with the bot's other pragmas (WAL, synchronous FULL).
 * Two files take the same work turn by turn, one with it off and one with it on (as the bot
 * runs), alternating which goes first, so that a machine busy with something else slows both
 * alike:
 *
 * - a turn's life: its conversation and the turn recorded, composed (its text for the service
 *   quoting the thread), posted, run, replied, finished: ten commits, the turn's nine each
 *   rewriting its row with its texts;
 * - the retention's purge of all those turns, 500 a statement, each batch followed by the
 *   WAL's TRUNCATE checkpoint (SqliteTurnStore.purgeTexts), as the bot does.
 *
 * Prints the median and p99 ms of a turn's life, the bytes it wrote (Linux: /proc/self/io),
 * the purge's median ms per batch and the bytes it wrote. Questions are 300 characters, one
 * in ten 9,000 (overflow pages); the composed texts 2,700 characters more.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Db, openDatabase } from "../src/store/sqlite/db.js";
import { sqliteStoresOver } from "../src/store/sqlite/open.js";
import type { Stores } from "../src/store/stores.js";
import { median, percentile } from "./stats.js";

const DEFAULT_TURNS = 2_000;
const BATCH = 500;

interface Arm {
  name: string;
  db: Db;
  conversations: Stores["conversations"];
  turns: Stores["turns"];
  life: number[];
  lifeBytes: number;
  purge: number[];
  purgeBytes: number;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const at = argv.indexOf("--turns");
  const count = at >= 0 ? Number(argv[at + 1]) : DEFAULT_TURNS;
  const dir = mkdtempSync(join(tmpdir(), "secure-delete-bench-"));
  let now = 1_000;
  const arms = [arm("off", false), arm("on (the bot)", true)];
  try {
    for (let i = 0; i < count; i++) {
      const texts = { question: words(i % 10 === 0 ? 9_000 : 300), context: words(2_700) };
      for (const a of i % 2 === 0 ? arms : [...arms].reverse()) {
        const bytes = writtenBytes();
        const started = performance.now();
        await oneTurn(a, i, texts);
        if (i >= count / 10) a.life.push(performance.now() - started);
        a.lifeBytes += writtenBytes() - bytes;
      }
    }
    now += 1_000;
    for (const a of arms) {
      const bytes = writtenBytes();
      for (;;) {
        const started = performance.now();
        const purged = await a.turns.purgeTexts(now, BATCH);
        a.purge.push(performance.now() - started);
        if (purged < BATCH) break;
      }
      a.purgeBytes = writtenBytes() - bytes;
    }
    report(count, arms);
  } finally {
    for (const a of arms) a.db.close();
    rmSync(dir, { recursive: true, force: true });
  }

  function arm(name: string, secureDelete: boolean): Arm {
    const db = openDatabase(join(dir, `${secureDelete ? "on" : "off"}.db`));
    if (!secureDelete) db.pragma("secure_delete = OFF");
    const { conversations, turns } = sqliteStoresOver(db, () => now);
    return {
      name,
      db,
      conversations,
      turns,
      ...{ life: [], lifeBytes: 0, purge: [], purgeBytes: 0 },
    };
  }
}

function report(count: number, arms: Arm[]): void {
  const kb = (bytes: number, per: number) => (bytes / per / 1024).toFixed(1).padStart(10);
  const row = (a: Arm) =>
    `  ${a.name.padEnd(14)} ${median(a.life).toFixed(2).padStart(8)} ${percentile(a.life, 99)
      .toFixed(2)
      .padStart(8)} ${kb(a.lifeBytes, count)} ${median(a.purge).toFixed(1).padStart(12)} ${kb(
      a.purgeBytes,
      a.purge.length,
    )}`;
  process.stdout.write(
    [
      `secure_delete, ${count} turns; purge ${BATCH} turns a batch`,
      `  ${"".padEnd(14)} ${"turn ms".padStart(8)} ${"p99".padStart(8)} ${"turn KiB".padStart(10)} ${"batch ms".padStart(12)} ${"batch KiB".padStart(10)}`,
      ...arms.map(row),
      "",
    ].join("\n"),
  );
}

/** Bytes this process has had written to storage so far (0 where /proc does not say). */
function writtenBytes(): number {
  if (!existsSync("/proc/self/io")) return 0;
  const line = /^write_bytes: (\d+)$/m.exec(readFileSync("/proc/self/io", "utf8"));
  return line ? Number(line[1]) : 0;
}

async function oneTurn(
  a: Arm,
  i: number,
  texts: { question: string; context: string },
): Promise<void> {
  const threadTs = `${1_700_000_000 + i}.000100`;
  const key = { team: "T", channel: `C${i % 20}`, threadTs };
  const conversation = await a.conversations.ensure(key, "asst");
  const created = (
    await a.turns.record({
      conversation: conversation,
      assistant: conversation.assistantId,
      ...key,
      messageTs: threadTs,
      user: `U${i % 50}`,
      content: texts.question,
      notes: [],
    })
  ).turn;
  if (!created) throw new Error("the turn was not recorded");
  const id = created.id;
  const { turns } = a;
  await turns.recordContent(id, {
    serviceContent: `${texts.context}\n\n${texts.question}`,
    contextThroughTs: threadTs,
    notes: [],
  });
  await turns.recordReplyAttempt(id, 0);
  await turns.recordReply(id, [`${threadTs}1`]);
  await turns.recordPostAttempt(id);
  await turns.recordMessage(id, `m-${i}`);
  await turns.recordRunAttempt(id, {});
  await turns.recordRunStart(id, { runId: `r-${i}`, startedAt: 1 });
  await turns.finish(id, { outcome: "completed", modelUsed: "m" });
}

function words(length: number): string {
  let text = "";
  while (text.length < length) text += `${randomBytes(5).toString("hex")} `;
  return text.slice(0, length);
}

await main();
