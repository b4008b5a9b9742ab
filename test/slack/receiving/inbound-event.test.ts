import { describe, expect, it } from "vitest";
import { parseMessageEvent } from "../../../src/slack/receiving/inbound-event.js";
import { appMention, messageEvent } from "../../../tools/slack-requests.js";

describe("a message event, parsed", () => {
  it("is keyed by the installation's workspace and keeps the writer's own team", () => {
    const shared = appMention({ channel: "C1", user: "U9", text: "<@UBOT> hi", userTeam: "TP" });
    expect(parseMessageEvent(shared, "T0001", "UBOT")).toMatchObject({
      kind: "message",
      inbound: { team: "T0001", authorTeam: "TP", authorTeamNamed: true, mentioned: true },
    });
    // Only `team`: it names the writer's team, but does not prove it in a shared channel.
    const teamOnly = {
      ...messageEvent({ channel: "D1", user: "U9", text: "x", channel_type: "im" }),
      team: "TX",
    };
    expect(parseMessageEvent(teamOnly, "T0001", "UBOT")).toMatchObject({
      inbound: { team: "T0001", authorTeam: "TX", authorTeamNamed: false, isDirect: true },
    });
    const { team: _team, ...noTeam } = teamOnly;
    expect(parseMessageEvent(noTeam, "T0001", "UBOT")).toMatchObject({
      inbound: { team: "T0001", authorTeam: "T0001" },
    });
  });
});
