/**
 * The chat with `--replicas 2` (without a terminal): the person's message lands on a
 * replica, which is SIGKILLed while it writes the answer; the other replica takes the answer
 * over once the lease expires, and the chat says so. Then everything is gone: the replicas'
 * processes and the session's database.
 */
import { join } from "node:path";
import { PassThrough } from "node:stream";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { runChat } from "../../sandbox/chat.js";
import { startWorkspace, type Workspace } from "../../sandbox/workspace.js";
import { postgresUrl } from "../support/postgres.js";
import { tempFolder } from "../support/temp-folder.js";

let ws: Workspace | undefined;

afterEach(async () => {
  await ws?.close(100);
});

const ANSWER = `The survivor finishes this. ${"Every word of it arrives in order. ".repeat(10)}`;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function databaseExists(name: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: postgresUrl() });
  await client.connect();
  try {
    const { rowCount } = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    return rowCount === 1;
  } finally {
    await client.end();
  }
}

describe("the sandbox with two replicas", () => {
  it("shows who received and who answered; a replica killed mid-answer is taken over", async () => {
    const workspace = await startWorkspace({
      simulator: { queueDelayMs: 0, answer: { tokensPerSecond: 40 } },
      logPath: join(tempFolder("sandbox-replicas-"), "sandbox.log"),
      replicas: { count: 2, serverUrl: postgresUrl() },
    });
    ws = workspace;
    const view = workspace.replicas;
    if (!view) throw new Error("no replicas");
    workspace.sim.control.setDefaultAnswer({ text: ANSWER });

    const input = new PassThrough();
    const output = new PassThrough();
    let printed = "";
    output.on("data", (chunk) => {
      printed += String(chunk);
    });
    const chat = runChat({ workspace, input, output, terminal: false, frameMs: 10 });
    input.write("who answers this?\n");

    // The answer is being written by the replica holding the conversation: kill that one.
    await workspace.slack.waitFor(
      (s) =>
        workspace.threadTs !== undefined &&
        s.replies(workspace.channel, workspace.threadTs).some((m) => m.text.includes("survivor")),
      10_000,
    );
    const ts = workspace.threadTs ?? "";
    const writer = (await view.answeredBy(ts)).at(-1) ?? view.receivedBy(ts);
    const other = writer === 1 ? 2 : 1;
    input.write(`/kill ${writer}\n/replicas\n`);
    input.end();
    await chat;

    const transcript = printed.replace(/\s+/g, " ");
    expect(transcript).toContain(`Replica ${view.receivedBy(ts)} received this message.`);
    expect(transcript).toContain(`Killed replica ${writer} (SIGKILL).`);
    expect(transcript).toMatch(new RegExp(`replica ${writer} \\(pid \\d+\\): killed`));
    expect(transcript).toMatch(new RegExp(`replica ${other} \\(pid \\d+\\): alive`));
    expect(transcript).toContain(`Answered by replica ${writer} → replica ${other} (taken over).`);
    expect(transcript).toContain(ANSWER.trim().replace(/\s+/g, " "));
    expect((await workspace.turnFor(ts))?.outcome).toBe("completed");

    const pids = view.list.map((r) => r.pid);
    await workspace.close(100);
    ws = undefined;
    expect(pids.filter(alive)).toEqual([]);
    expect(await databaseExists(view.database)).toBe(false);
  }, 30_000);
});
