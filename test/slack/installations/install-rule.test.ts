import { describe, expect, it } from "vitest";
import { mayInstall, refusalPage } from "../../../src/slack/installations/install-rule.js";

const ALLOWED = ["T0OURS", "E0OURS"];

describe("who may install the app", () => {
  it.each([
    ["a listed workspace", { team: { id: "T0OURS" } }, true],
    ["a workspace of a listed org", { team: { id: "T0GRID" }, enterprise: { id: "E0OURS" } }, true],
    ["a listed org, org-wide", { enterprise: { id: "E0OURS" }, isEnterpriseInstall: true }, true],
    ["a workspace not listed", { team: { id: "T0ELSE" } }, false],
    ["a workspace of an org not listed", { team: { id: "T0X" }, enterprise: { id: "E0X" } }, false],
    // Org-wide serves every workspace of the org: only the org's own id lets it in.
    [
      "an org not listed, org-wide, naming a listed workspace",
      { team: { id: "T0OURS" }, enterprise: { id: "E0X" }, isEnterpriseInstall: true },
      false,
    ],
    ["nobody named", {}, false],
  ])("%s: %s", (_name, party, allowed) => {
    expect(mayInstall(party, ALLOWED)).toBe(allowed);
  });

  it("says on the refusal page who was refused and whom to ask, escaped", () => {
    const page = refusalPage({ id: "T0ELSE", name: "<b>Else</b>" });
    expect(page).toContain("This app can't be installed in &lt;b&gt;Else&lt;/b&gt;");
    expect(page).toContain("add <code>T0ELSE</code> to its <code>ALLOWED_TEAM_IDS</code>");
    expect(page).not.toContain("<b>Else</b>");
  });
});
