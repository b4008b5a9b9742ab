import { describe, expect, it } from "vitest";
import { Admission, type AdmissionOptions } from "../../../src/slack/admission/admission.js";
import { type KnownPerson, UserDirectory } from "../../../src/slack/admission/user-directory.js";
import { ManualClock } from "../../support/manual-clock.js";

const WORKSPACE = "T0001";
const ORG = "E0ORG";

/**
 * The rule over a users.info that answers from `people` (an absent person: Slack fails the
 * call), counting the calls; `hang` makes every call wait for ever.
 */
function setup(
  options: Partial<AdmissionOptions> & { enterprise?: string; hang?: boolean } = {},
  people: Record<string, KnownPerson> = {},
) {
  const clock = new ManualClock();
  const lookups: string[] = [];
  const warnings: string[] = [];
  const directory = new UserDirectory({
    now: () => clock.now(),
    lookup: async (id) => {
      lookups.push(id);
      if (options.hang) await new Promise(() => {});
      const person = people[id];
      if (!person) throw new Error("user_not_found");
      return person;
    },
  });
  const installation = {
    whoAmI: async () => ({
      userId: "UBOT",
      botId: "BBOT",
      teamId: WORKSPACE,
      enterpriseId: options.enterprise,
    }),
  };
  const admission = new Admission({
    allowedTeamIds: undefined,
    allowGuests: true,
    installation,
    people: directory,
    clock,
    logger: { warn: (_fields, message) => warnings.push(message) },
    ...options,
  });
  return { admission, lookups, warnings, clock };
}

describe("who may use the bot", () => {
  it("answers people of the installation's workspace without asking Slack about them", async () => {
    const { admission, lookups } = setup();
    expect(await admission.check({ user: "U1", team: WORKSPACE })).toBeUndefined();
    expect(lookups).toEqual([]);
  });

  it("refuses someone of another organisation, whatever users.info says or fails to say", async () => {
    const { admission } = setup({}, { U2: { teamId: "TOTHER", guest: false } });
    expect(await admission.check({ user: "U2", team: "TOTHER" })).toBe("outsider");
    // users.info fails: the event named another organisation, nothing says otherwise.
    expect(await admission.check({ user: "U404", team: "TOTHER" })).toBe("outsider");
  });

  it("answers a person of another workspace of the installation's Enterprise org", async () => {
    const { admission, lookups } = setup(
      { enterprise: ORG },
      { U3: { teamId: "T0SISTER", enterpriseId: ORG } },
    );
    // The event names only their own workspace: users.info shows the org.
    expect(await admission.check({ user: "U3", team: "T0SISTER" })).toBeUndefined();
    expect(lookups).toEqual(["U3"]);
    // A slash command names the org itself: no lookup needed.
    expect(
      await admission.check({ user: "U4", team: "T0SISTER", enterprise: ORG }),
    ).toBeUndefined();
    expect(lookups).toEqual(["U3"]);
  });

  it("answers exactly the listed workspaces and orgs when ALLOWED_TEAM_IDS is set", async () => {
    const { admission, warnings } = setup({ allowedTeamIds: ["TPARTNER"] });
    expect(await admission.check({ user: "U5", team: "TPARTNER" })).toBeUndefined();
    expect(await admission.check({ user: "U6", team: WORKSPACE })).toBe("outsider");
    expect(warnings).toEqual([
      "ALLOWED_TEAM_IDS leaves out the bot's own workspace: its people are not answered",
    ]);
  });

  it("confirms with users.info what a shared channel's event alone does not prove", async () => {
    const { admission } = setup({}, { U7: { teamId: "TOTHER" }, U8: { teamId: WORKSPACE } });
    expect(await admission.check({ user: "U7", team: WORKSPACE, confirm: true })).toBe("outsider");
    expect(await admission.check({ user: "U8", team: WORKSPACE, confirm: true })).toBeUndefined();
    expect(await admission.check({ user: "U404", team: WORKSPACE, confirm: true })).toBe(
      "unchecked",
    );
  });
});

describe("guests", () => {
  const people = { UGUEST: { teamId: WORKSPACE, guest: true }, UMEMBER: { teamId: WORKSPACE } };

  it("are answered by default, without a lookup", async () => {
    const { admission, lookups } = setup({}, people);
    expect(await admission.check({ user: "UGUEST", team: WORKSPACE })).toBeUndefined();
    expect(lookups).toEqual([]);
  });

  it("are refused when ALLOW_GUESTS=false; members are still answered, one lookup each", async () => {
    const { admission, lookups } = setup({ allowGuests: false }, people);
    expect(await admission.check({ user: "UGUEST", team: WORKSPACE })).toBe("guest");
    expect(await admission.check({ user: "UMEMBER", team: WORKSPACE })).toBeUndefined();
    expect(await admission.check({ user: "UGUEST", team: WORKSPACE })).toBe("guest");
    expect(lookups).toEqual(["UGUEST", "UMEMBER"]);
  });

  it("refuse, asking to try again, when users.info fails or is slower than the wait", async () => {
    const failing = setup({ allowGuests: false });
    expect(await failing.admission.check({ user: "U404", team: WORKSPACE })).toBe("unchecked");

    const slow = setup({ allowGuests: false, hang: true, lookupWaitMs: 800 });
    const decided = slow.admission.check({ user: "U9", team: WORKSPACE });
    await slow.clock.advance(799);
    let result: string | undefined = "pending";
    void decided.then((r) => {
      result = r;
    });
    await slow.clock.advance(0);
    expect(result).toBe("pending");
    await slow.clock.advance(1);
    expect(await decided).toBe("unchecked");
  });
});
