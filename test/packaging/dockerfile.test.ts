/**
 * What can be checked of the Dockerfile without a Docker engine: the files it copies exist
 * and are not excluded from the build context, the entry it runs is what the build emits
 * and starts under plain node, and the runtime stage is unprivileged, health-checked and
 * keeps its database on a volume.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, posix, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMetrics } from "../../src/observability/metrics.js";
import { opsRoutes } from "../../src/observability/routes.js";

const ROOT = resolve(import.meta.dirname, "../..");

interface Instruction {
  keyword: string;
  args: string;
}

interface Stage {
  name: string | undefined;
  instructions: Instruction[];
}

/** Instructions by stage, continuation lines joined and comments dropped. */
function parseDockerfile(text: string): Stage[] {
  const logical: string[] = [];
  let current = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (current === "" && (line === "" || line.startsWith("#"))) continue;
    if (line.startsWith("#")) continue;
    if (line.endsWith("\\")) {
      current += `${line.slice(0, -1)} `;
      continue;
    }
    logical.push(current + line);
    current = "";
  }
  const stages: Stage[] = [];
  for (const line of logical) {
    const match = /^(\S+)\s*(.*)$/.exec(line);
    if (!match) continue;
    const keyword = (match[1] ?? "").toUpperCase();
    const args = match[2] ?? "";
    if (keyword === "FROM") {
      stages.push({ name: /\bAS\s+(\S+)/i.exec(args)?.[1], instructions: [] });
    }
    stages.at(-1)?.instructions.push({ keyword, args });
  }
  return stages;
}

/** The words of a JSON-form (`["a","b"]`) or shell-form argument list. */
function words(args: string): string[] {
  const trimmed = args.trim();
  if (trimmed.startsWith("[")) return JSON.parse(trimmed) as string[];
  return trimmed.split(/\s+/).filter(Boolean);
}

const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
const stages = parseDockerfile(dockerfile);
const final = stages.at(-1) as Stage;
const all = (stage: Stage, keyword: string) =>
  stage.instructions.filter((i) => i.keyword === keyword);

/** `.dockerignore` patterns (simple names and globs at the context root). */
function ignoredByDocker(path: string): boolean {
  const file = join(ROOT, ".dockerignore");
  if (!existsSync(file)) return false;
  const patterns = readFileSync(file, "utf8")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#") && !l.startsWith("!"));
  const normalized = posix.normalize(path).replace(/^\.\//, "");
  return patterns.some((pattern) => {
    const p = pattern.replace(/^\.?\//, "").replace(/\/$/, "");
    const regex = new RegExp(
      `^${p
        .replace(/[.+^${}()|[\]\\]/g, "\\$&")
        .replace(/\*\*/g, ".*")
        .replace(/\*/g, "[^/]*")}(/|$)`,
    );
    return regex.test(normalized);
  });
}

describe("the Dockerfile", () => {
  it("copies only files that exist in the repository and are in the build context", () => {
    const sources: string[] = [];
    for (const stage of stages) {
      for (const copy of [...all(stage, "COPY"), ...all(stage, "ADD")]) {
        const parts = words(copy.args).filter((w) => !w.startsWith("--"));
        if (/--from=/.test(copy.args)) continue;
        sources.push(...parts.slice(0, -1));
      }
    }
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) {
      expect(existsSync(join(ROOT, source)), `${source} exists`).toBe(true);
      expect(ignoredByDocker(source), `${source} is not in .dockerignore`).toBe(false);
    }
  });

  it("copies from earlier stages only", () => {
    const names = stages.map((s) => s.name);
    stages.forEach((stage, index) => {
      for (const copy of all(stage, "COPY")) {
        const from = /--from=(\S+)/.exec(copy.args)?.[1];
        if (from !== undefined) expect(names.slice(0, index)).toContain(from);
      }
    });
  });

  it("runs the final stage as an unprivileged user", () => {
    const users = all(final, "USER").map((u) => u.args.trim().split(":")[0]);
    expect(users.length).toBeGreaterThan(0);
    expect(["root", "0"]).not.toContain(users.at(-1));
  });

  it("checks health on a route the bot serves", () => {
    const health = all(final, "HEALTHCHECK").at(-1)?.args ?? "";
    expect(health).not.toMatch(/^NONE\b/i);
    expect(health).toMatch(/^(--\S+\s+)*CMD\b/);
    expect(health).toContain("/healthz'");
    const served = opsRoutes(createMetrics(), { checks: {} }).map((r) => `${r.method} ${r.path}`);
    expect(served).toContain("GET /healthz");
  });

  it("keeps the database on a volume", () => {
    const env = all(final, "ENV")
      .map((e) => e.args)
      .join(" ");
    const databasePath = /DATABASE_PATH=(\S+)/.exec(env)?.[1];
    expect(databasePath).toBeDefined();
    const volumes = all(final, "VOLUME").flatMap((v) => words(v.args));
    const dir = posix.dirname(databasePath ?? "");
    expect(volumes.some((v) => dir === v || dir.startsWith(`${v.replace(/\/$/, "")}/`))).toBe(true);
  });

  describe("its entry point", () => {
    let outDir: string;

    beforeAll(() => {
      // Under node_modules so the compiled files resolve the project's packages as dist/ would.
      const cache = join(ROOT, "node_modules", ".cache");
      mkdirSync(cache, { recursive: true });
      outDir = mkdtempSync(join(cache, "dockerfile-test-"));
      writeFileSync(join(outDir, "package.json"), JSON.stringify({ type: "module" }));
      execFileSync(
        process.execPath,
        [
          join(ROOT, "node_modules/typescript/bin/tsc"),
          "-p",
          "tsconfig.build.json",
          "--outDir",
          outDir,
        ],
        { cwd: ROOT, stdio: "pipe" },
      );
      // A whole compile: about 20 s on a quiet 2-core machine, three times that on a busy one.
      // The test judges what the compiled entry does, not how fast it compiles.
    }, 240_000);

    afterAll(() => rmSync(outDir, { recursive: true, force: true }));

    it("is the file `npm run build` emits, and it starts under plain node", () => {
      const command = words(
        all(final, "ENTRYPOINT").at(-1)?.args ?? all(final, "CMD").at(-1)?.args ?? "",
      );
      expect(command[0]).toBe("node");
      const entry = command[1] ?? "";
      expect(entry.startsWith("dist/")).toBe(true);
      const built = join(outDir, entry.slice("dist/".length));
      expect(existsSync(built)).toBe(true);

      // Without settings it must stop with the one clear message, proving its imports load.
      const empty = mkdtempSync(join(tmpdir(), "dockerfile-entry-"));
      const run = spawnSync(process.execPath, [built], {
        cwd: empty,
        env: { PATH: process.env.PATH ?? "" },
        encoding: "utf8",
        timeout: 20_000,
      });
      rmSync(empty, { recursive: true, force: true });
      expect(run.stderr).toBe("Configuration error: SLACK_BOT_TOKEN is required but not set.\n");
      expect(run.status).toBe(1);
    });
  });
});
