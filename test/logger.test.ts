import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { boltLogger, createLogger } from "../src/logger.js";

/** One of each secret the settings hold; the service and metrics tokens have no known shape. */
const SECRETS = {
  bot: "xoxb-1111-2222-botsecretvalue",
  app: "xapp-1-A0123-appsecretvalue",
  signing: "8f14e45fceea167a5a36dedd4bea2543",
  service: "svc-plain-7d1f9c2e",
  metrics: "metrics-token-0123456789",
};

function capture(options: { pretty?: boolean; secrets?: string[] } = {}) {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n")) if (line.trim()) lines.push(line);
      done();
    },
  });
  const logger = createLogger({
    level: "debug",
    secrets: options.secrets ?? Object.values(SECRETS),
    destination,
    ...(options.pretty === undefined ? {} : { pretty: options.pretty }),
  });
  return { logger, lines };
}

/** An error as a library might throw it: the secrets in its message, cause and own fields. */
function deepError(): Error {
  const cause = new Error(`upstream refused token ${SECRETS.service}`);
  const error = new Error(`request failed (signed with ${SECRETS.signing})`, { cause });
  Object.assign(error, {
    request: { auth: [SECRETS.service, { nested: [[SECRETS.signing]] }] },
    attempts: [{ header: `Token ${SECRETS.metrics}` }],
    inner: new AggregateError([new Error(`bad ${SECRETS.app}`)], `all failed ${SECRETS.bot}`),
  });
  return error;
}

function expectNoSecret(lines: string[]): void {
  const text = lines.join("\n");
  for (const [name, secret] of Object.entries(SECRETS)) {
    expect(text, name).not.toContain(secret);
    // Nor a long piece of it (a prefix kept for diagnosis is at most 5 characters).
    expect(text, name).not.toContain(secret.slice(5));
  }
}

describe("the logger's scrubbing", () => {
  it("masks every configured secret at any depth: fields, arrays, causes, messages, stacks", () => {
    const { logger, lines } = capture();
    const error = deepError();
    logger.error({ err: error }, "call failed");
    logger.error(error);
    logger.warn({ context: { tries: [{ detail: error }, [[SECRETS.signing]]] } }, "nested");
    logger.info({ url: `https://svc.example/v1?token=${SECRETS.service}` }, "plain field");
    logger.info(`the bare service token ${SECRETS.service}, without Bearer`);
    logger.child({ who: SECRETS.signing }).debug({ n: 1 }, "child bindings");
    logger.warn({ stack: error.stack, causeStack: (error.cause as Error).stack }, "stacks");
    expect(lines).toHaveLength(7);
    expectNoSecret(lines);
    // The lines stay JSON and keep what is not secret.
    const parsed = lines.map((line) => JSON.parse(line) as { msg: string });
    expect(parsed.map((l) => l.msg)).toContain("call failed");
    expect(lines.join("\n")).toContain("request failed");
    expect(lines.join("\n")).toContain("upstream refused token [redacted]");
    expect(lines.join("\n")).toContain("the bare service token [redacted], without Bearer");
  });

  it("masks them in Bolt's lines too", () => {
    const { logger, lines } = capture();
    const bolt = boltLogger(logger);
    bolt.error(deepError());
    bolt.debug("sending", { body: { token: SECRETS.app, nested: [SECRETS.service] } });
    bolt.warn(`apps.connections.open with ${SECRETS.app} failed`);
    expect(lines).toHaveLength(3);
    expectNoSecret(lines);
  });

  it("masks a secret whose characters JSON escapes, and keeps the line JSON", () => {
    const odd = 'svc"with\\quote';
    const { logger, lines } = capture({ secrets: [odd] });
    logger.error({ err: new Error(`refused ${odd}`), list: [odd, JSON.stringify({ odd })] }, "x");
    logger.info(`bare ${odd}`);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    const text = lines.map((line) => JSON.stringify(JSON.parse(line))).join("\n");
    for (const form of [odd, JSON.stringify(odd).slice(1, -1)]) expect(text).not.toContain(form);
    expect(lines.join("\n")).not.toContain("with\\\\quote");
  });

  it("leaves a value too short to be a secret alone, so every line stays JSON", () => {
    const { logger, lines } = capture({ secrets: ["t", ...Object.values(SECRETS)] });
    logger.info({ state: "started", note: `with ${SECRETS.service}` }, "the bot started");
    const line = JSON.parse(lines[0] ?? "{}") as { msg?: string; state?: string; note?: string };
    expect([line.msg, line.state, line.note]).toEqual([
      "the bot started",
      "started",
      "with [redacted]",
    ]);
  });

  it("masks token shapes nobody configured: Slack tokens and bearer credentials", () => {
    const { logger, lines } = capture({ secrets: [] });
    logger.warn(
      { err: { detail: ["xoxp-9999-other-user-token", "Bearer some.jwt.value"] } },
      "unknown tokens",
    );
    const text = lines.join("\n");
    expect(text).not.toContain("other-user-token");
    expect(text).not.toContain("some.jwt.value");
    expect(() => JSON.parse(lines[0] ?? "")).not.toThrow();
  });

  it("masks them in readable (pretty) lines", () => {
    const { logger, lines } = capture({ pretty: true });
    logger.error({ err: deepError() }, "call failed");
    expect(lines.length).toBeGreaterThan(1);
    expectNoSecret(lines);
  });
});
