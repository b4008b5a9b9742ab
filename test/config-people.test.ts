import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { configuredSecrets, loadConfig } from "../src/config.js";
import { DEFAULT_LINK_TOKEN_HELP } from "../src/config-people.js";
import { BASE_ENV as base, startError } from "./support/config-env.js";

const KEY = randomBytes(32).toString("base64");

describe("people's settings", () => {
  it("default to the shared token, no linking, the one assistant and a general help sentence", () => {
    const { people } = loadConfig(base);
    expect(people.identityMode).toBe("shared");
    expect(people.encryptionKey).toBeUndefined();
    expect(people.assistants).toEqual([{ id: "asst-1", label: "asst-1" }]);
    expect(people.linkTokenHelp).toBe(DEFAULT_LINK_TOKEN_HELP);
  });

  it("read a 32-byte key in either base64 alphabet, and every mode", () => {
    const key = randomBytes(32);
    for (const written of [key.toString("base64"), key.toString("base64url")]) {
      const config = loadConfig({
        ...base,
        TOKEN_ENCRYPTION_KEY: written,
        IDENTITY_MODE: "Personal",
      });
      expect(config.people.encryptionKey?.equals(key)).toBe(true);
      expect(config.people.identityMode).toBe("personal");
    }
    expect(
      loadConfig({ ...base, TOKEN_ENCRYPTION_KEY: KEY, IDENTITY_MODE: "either" }).people
        .identityMode,
    ).toBe("either");
  });

  it("refuse a malformed key with one sentence naming the variable, never the value", () => {
    for (const bad of ["short", randomBytes(16).toString("base64"), `${KEY}x!`]) {
      const message = startError({ TOKEN_ENCRYPTION_KEY: bad });
      expect(message).toMatch(/^TOKEN_ENCRYPTION_KEY is malformed: it must be 32 random bytes/);
      expect(message).not.toContain(bad);
    }
  });

  it("refuse personal and either modes without a key, and an unknown mode", () => {
    expect(startError({ IDENTITY_MODE: "personal" })).toBe(
      "IDENTITY_MODE=personal needs TOKEN_ENCRYPTION_KEY: people's own tokens are kept only encrypted.",
    );
    expect(startError({ IDENTITY_MODE: "either" })).toContain("needs TOKEN_ENCRYPTION_KEY");
    expect(startError({ IDENTITY_MODE: "mine" })).toBe(
      "IDENTITY_MODE is malformed: it must be shared, either or personal.",
    );
  });

  it("list ASSISTANTS with ASSISTANT_ID always first, labelled as listed or by its id", () => {
    const listed = loadConfig({ ...base, ASSISTANTS: " asst-2=Legal , asst-1=General," });
    expect(listed.people.assistants).toEqual([
      { id: "asst-1", label: "General" },
      { id: "asst-2", label: "Legal" },
    ]);
    const without = loadConfig({ ...base, ASSISTANTS: "asst-2=Legal" });
    expect(without.people.assistants.map((a) => a.id)).toEqual(["asst-1", "asst-2"]);
  });

  it("refuse malformed or repeated ASSISTANTS pairs", () => {
    expect(startError({ ASSISTANTS: "asst-2" })).toMatch(
      /^ASSISTANTS is malformed: "asst-2" is not an id=Label pair/,
    );
    expect(startError({ ASSISTANTS: "=Legal" })).toContain("is not an id=Label pair");
    expect(startError({ ASSISTANTS: "a=Legal,b=legal" })).toContain("listed twice");
  });

  it("read LINK_TOKEN_HELP, and keep the key out of every log line", () => {
    const config = loadConfig({
      ...base,
      TOKEN_ENCRYPTION_KEY: KEY,
      LINK_TOKEN_HELP: "Create one at https://assistant.example/settings/tokens.",
    });
    expect(config.people.linkTokenHelp).toBe(
      "Create one at https://assistant.example/settings/tokens.",
    );
    expect(configuredSecrets(config)).toContain(KEY);
  });
});
