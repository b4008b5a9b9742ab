import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger, learnSecret } from "../../src/logger.js";

describe("a secret learnt while the bot runs", () => {
  it("is masked in every later line, at any depth", () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const logger = createLogger({ level: "info", secrets: [], destination, pretty: false });
    const token = "pat-linked-person-0123";
    learnSecret(logger, token);
    logger.child({ component: "x" }).info({ err: { cause: `refused ${token}` } }, `with ${token}`);
    expect(lines.join("")).not.toContain(token);
    expect(lines.join("")).toContain("[redacted]");
  });
});
