import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { optionsFromArgs, UsageError } from "../../../tools/simulator/cli-args.js";

/** `npm run simulator` is `tsx tools/simulator/cli.ts`; these run that same command. */

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const TSX = fileURLToPath(new URL("../../../node_modules/.bin/tsx", import.meta.url));
const SPAWN_OPTIONS = { cwd: ROOT, stdio: "pipe", detached: true } as const;
const children: ChildProcess[] = [];

afterEach(() => {
  // Each child leads its own process group, so a failed test leaves no simulator behind.
  for (const child of children.splice(0)) {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    } catch {
      // The whole group has already exited.
    }
  }
});

function simulator(args: string[], viaNpm = false) {
  const child = viaNpm
    ? spawn("npm", ["run", "--silent", "simulator", "--", ...args], SPAWN_OPTIONS)
    : spawn(TSX, ["tools/simulator/cli.ts", ...args], SPAWN_OPTIONS);
  children.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (data: Buffer) => {
    stdout += data.toString();
  });
  child.stderr?.on("data", (data: Buffer) => {
    stderr += data.toString();
  });
  const exited = once(child, "exit") as Promise<[number | null, string | null]>;
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout?.on("data", () => {
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/u.exec(stdout);
      if (match?.[1]) resolve(match[1]);
    });
    void exited.then(() => reject(new Error(`exited early: ${stderr}`)));
  });
  // Only the tests that wait for the listening line care when it never comes.
  listening.catch(() => undefined);
  return { child, listening, exited, output: () => ({ stdout, stderr }) };
}

describe("CLI: npm run simulator -- --port <p> [--token <t>]", () => {
  it("prints one listening line, serves the interface, and exits 0 on SIGTERM", async () => {
    const sim = simulator(["--port", "0", "--token", "s3cret", "--dialect", "plain"]);
    const url = await sim.listening;
    expect(sim.output().stdout.trim().split("\n")).toHaveLength(1);
    expect(sim.output().stdout).toContain("plain");
    const ok = await fetch(`${url}/v1/thread`, {
      method: "POST",
      headers: { authorization: "Bearer s3cret", "content-type": "application/json" },
      body: JSON.stringify({ assistantId: "a" }),
    });
    expect(ok.status).toBe(201);
    const refused = await fetch(`${url}/v1/threads`, {
      headers: { authorization: "Bearer other" },
    });
    expect(refused.status).toBe(401);
    sim.child.kill("SIGTERM");
    const [code] = await sim.exited;
    expect(code).toBe(0);
  });

  it("stops when only the npm process is sent SIGTERM (npm's sh does not pass it on)", async () => {
    const sim = simulator(["--port", "0"], true);
    const url = await sim.listening;
    expect(
      (await fetch(`${url}/v1/threads`, { headers: { authorization: "Bearer t" } })).status,
    ).toBe(200);
    // The pipe closes once every process holding it (npm, sh, tsx, the simulator) has exited.
    const pipeClosed = once(sim.child.stdout as NodeJS.ReadableStream, "close");
    sim.child.kill("SIGTERM");
    await pipeClosed;
    await expect(fetch(`${url}/v1/threads`)).rejects.toThrow();
  });

  it("exits 2 with the message and the usage on a bad flag", async () => {
    const sim = simulator(["--port", "abc"]);
    const [code] = await sim.exited;
    expect(code).toBe(2);
    expect(sim.output().stderr).toMatch(/^simulator: --port must be an integer from 0 to 65535/u);
    expect(sim.output().stderr).toContain("usage: npm run simulator");
  });
});

describe("CLI flags", () => {
  it("maps every flag onto the simulator options (default port 8787)", () => {
    expect(optionsFromArgs([])).toEqual({ port: 8787 });
    expect(
      optionsFromArgs([
        "--port=9000",
        "--token",
        "t",
        "--rate",
        "80",
        "--length",
        "1200",
        "--dialect",
        "run",
        "--queue-delay",
        "0",
        "--keep-alive",
        "500",
      ]),
    ).toEqual({
      port: 9000,
      token: "t",
      answer: { tokensPerSecond: 80, length: 1200 },
      dialect: "run",
      queueDelayMs: 0,
      keepAliveMs: 500,
    });
  });

  it.each([
    [["--port", "abc"], /--port must be an integer/u],
    [["--port", "70000"], /--port must be an integer/u],
    [["--rate", "0"], /--rate must be an integer from 1/u],
    [["--length", "1.5"], /--length must be an integer/u],
    [["--dialect", "xml"], /--dialect must be one of events, openai, snapshot, run, plain/u],
    [["--bogus"], /Unknown option '--bogus'/u],
    [["--port"], /argument missing/u],
    [["extra"], /positional/u],
    [["--token", ""], /--token must not be empty/u],
  ])("refuses %j with a clear message", (args, message) => {
    expect(() => optionsFromArgs(args)).toThrow(UsageError);
    expect(() => optionsFromArgs(args)).toThrow(message);
  });
});
