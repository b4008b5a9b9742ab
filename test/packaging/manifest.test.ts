/**
 * `manifest.yml` is what an operator pastes into Slack to create the app: it must be valid
 * YAML, declare the agent view, subscribe every event the bot listens to and grant the
 * scopes of every Web API method it calls.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { BOT_SCOPES } from "../../src/slack/installations/bot-scopes.js";
import { readManifestYaml, type Yaml } from "../support/manifest-yaml.js";

const ROOT = resolve(import.meta.dirname, "../..");
const source = readFileSync(join(ROOT, "manifest.yml"), "utf8");

type Node = { [key: string]: Yaml };
const manifest = readManifestYaml(source) as Node;
const at = (...path: string[]): Yaml | undefined =>
  path.reduce<Yaml | undefined>(
    (node, key) =>
      node !== null && typeof node === "object" && !Array.isArray(node) ? node[key] : undefined,
    manifest,
  );

/** The events the bot's listeners take (`app.event("…")` under src/slack). */
function listenedEvents(): string[] {
  const dir = join(ROOT, "src/slack");
  const names = new Set<string>();
  const files = readdirSync(dir, { recursive: true, encoding: "utf8" });
  for (const file of files.filter((f) => f.endsWith(".ts"))) {
    const text = readFileSync(join(dir, file), "utf8");
    for (const match of text.matchAll(/app\.event\("([a-z_]+)"/g)) names.add(match[1] as string);
  }
  return [...names].sort();
}

/** The bot scope each Web API method the bot calls needs (Slack's method reference). */
const SCOPE_OF_METHOD: Record<string, string> = {
  "client.chat.postMessage": "chat:write",
  "client.chat.update": "chat:write",
  "client.chat.delete": "chat:write",
  "client.chat.postEphemeral": "chat:write",
  "client.users.info": "users:read",
  "client.conversations.replies": "channels:history",
  "client.assistant.threads.setStatus": "chat:write",
  "client.assistant.threads.setSuggestedPrompts": "assistant:write",
  "client.agents.sessions.setStatus": "chat:write",
  "client.agents.sessions.rename": "chat:write",
  "client.files.info": "files:read",
  // Not a method: a file's download from its url_private, with the bot token.
  downloadSlackFile: "files:read",
};

describe("manifest.yml", () => {
  it("is YAML the strict reader takes whole", () => {
    expect(manifest.display_information).toMatchObject({ name: "Assistant" });
  });

  it("declares the agent view with a description, and the Messages tab", () => {
    const view = at("features", "agent_view") as Node;
    expect(typeof view.agent_description).toBe("string");
    expect((view.agent_description as string).trim().length).toBeGreaterThan(10);
    expect(view.suggested_prompts).toEqual([]);
    expect(at("features", "app_home", "messages_tab_enabled")).toBe(true);
    expect(at("features", "app_home", "messages_tab_read_only_enabled")).toBe(false);
    expect(at("features", "assistant_view")).toBeUndefined();
  });

  it("subscribes every event the bot listens to, and those of the agent surface", () => {
    const events = at("settings", "event_subscriptions", "bot_events") as string[];
    expect(new Set(events).size).toBe(events.length);
    const subscribed = (name: string) =>
      name === "message" ? events.some((e) => e.startsWith("message.")) : events.includes(name);
    expect(listenedEvents().filter((name) => !subscribed(name))).toEqual([]);
    expect(events).toEqual(
      expect.arrayContaining([
        "app_mention",
        "message.im",
        "app_home_opened",
        "assistant_thread_started",
        "agent_session_stopped",
        "app_context_changed",
      ]),
    );
  });

  it("grants the scope of every Web API method the bot calls", () => {
    const scopes = at("oauth_config", "scopes", "bot") as string[];
    const webApi = readFileSync(join(ROOT, "src/slack/web-api/web-api.ts"), "utf8");
    const called = Object.keys(SCOPE_OF_METHOD).filter((method) => webApi.includes(`${method}(`));
    expect(called).toEqual(Object.keys(SCOPE_OF_METHOD));
    const missing = called.filter((method) => !scopes.includes(SCOPE_OF_METHOD[method] as string));
    expect(missing).toEqual([]);
    expect(scopes).toEqual(expect.arrayContaining(["app_mentions:read", "commands", "im:history"]));
  });

  it("grants exactly the scopes the OAuth install flow asks for", () => {
    expect(at("oauth_config", "scopes", "bot")).toEqual(BOT_SCOPES);
  });

  it("keeps the command, the shortcut, interactivity and Socket Mode", () => {
    expect(at("features", "slash_commands")).toMatchObject([{ command: "/assistant" }]);
    expect(at("features", "shortcuts")).toMatchObject([{ callback_id: "ask_assistant" }]);
    expect(at("settings", "interactivity", "is_enabled")).toBe(true);
    expect(at("settings", "socket_mode_enabled")).toBe(true);
  });
});

describe("the strict YAML reader", () => {
  it("refuses what it would misread rather than guessing", () => {
    expect(() => readManifestYaml("a:\n\tb: 1")).toThrow(/tab/);
    expect(() => readManifestYaml("a: 1\na: 2")).toThrow(/duplicate key "a"/);
    expect(() => readManifestYaml("a:\n  - b\n   c: 1")).toThrow(/line 3/);
    expect(() => readManifestYaml("a: [b, c]")).toThrow(/unsupported/);
    expect(() => readManifestYaml("a: b: c")).toThrow(/quote it/);
  });

  it("reads nested mappings, lists of mappings, quotes and comments", () => {
    const text = [
      "top: # a comment",
      "  name: 'it''s' # another",
      '  color: "#2c2d30"',
      "  on: true",
      "  items:",
      "    - plain",
      "    - key: value",
      "      more: 2",
      "  empty: []",
    ].join("\n");
    expect(readManifestYaml(text)).toEqual({
      top: {
        name: "it's",
        color: "#2c2d30",
        on: true,
        items: ["plain", { key: "value", more: 2 }],
        empty: [],
      },
    });
  });
});
