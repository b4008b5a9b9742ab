import { describe, expect, it } from "vitest";
import { Identities } from "../../src/people/identities.js";
import { refusalConfirmed } from "../../src/people/token-check.js";
import type { Credential } from "../../src/service/credential.js";
import {
  AuthenticationError,
  ConnectionError,
  type ServiceError,
} from "../../src/service/errors.js";

const ALICE = { team: "T1", user: "U0ALICE" };
const TOKEN = "pat-alice-0123456789abcdef";
const SHARED = "shared-token-0123456789";
const REQUEST = { method: "GET", path: "/v1/threads" };
const credential: Credential = {
  identity: ALICE.user,
  token: TOKEN,
  personal: true,
  workspace: "T1",
};

/** A service answering GET /v1/threads per token: ok, refused (401) or unreachable. */
function service(answers: Record<string, "ok" | "refused" | "unreachable">) {
  const asked: string[] = [];
  return {
    asked,
    async listThreads(_filter: unknown, opts?: { credential?: Credential }) {
      const token = opts?.credential?.token ?? "";
      asked.push(token);
      const answer = answers[token] ?? "ok";
      const failure: ServiceError | undefined =
        answer === "refused"
          ? new AuthenticationError("refused", REQUEST, 401)
          : answer === "unreachable"
            ? new ConnectionError("refused connection", REQUEST, false)
            : undefined;
      if (failure) throw failure;
      return [];
    },
  };
}

const check = {
  user: ALICE.user,
  token: TOKEN,
  sharedToken: SHARED,
  assistantId: "a",
  timeoutMs: 1_000,
};

describe("confirming a 401 to a person's token", () => {
  it("confirms it only when their token is refused again while the shared token is accepted", async () => {
    const confirmed = service({ [TOKEN]: "refused", [SHARED]: "ok" });
    expect(await refusalConfirmed(confirmed, check)).toBe(true);
    expect(confirmed.asked).toEqual([TOKEN, SHARED]);

    // Every token refused: an incident at the service, not this person's token.
    const incident = service({ [TOKEN]: "refused", [SHARED]: "refused" });
    expect(await refusalConfirmed(incident, check)).toBe(false);
    // Accepted when asked again: a passing fault; the shared token is not even asked.
    const passing = service({ [TOKEN]: "ok" });
    expect(await refusalConfirmed(passing, check)).toBe(false);
    expect(passing.asked).toEqual([TOKEN]);
    // No answer either way: nothing is confirmed.
    expect(await refusalConfirmed(service({ [TOKEN]: "unreachable" }), check)).toBe(false);
    const sharedDown = service({ [TOKEN]: "refused", [SHARED]: "unreachable" });
    expect(await refusalConfirmed(sharedDown, check)).toBe(false);
  });
});

describe("a person's token the service refused", () => {
  function identities(confirm: () => Promise<boolean>, linked: () => string | undefined) {
    const unlinked: string[] = [];
    const told: string[] = [];
    let confirmations = 0;
    const source = new Identities({
      mode: "personal",
      vault: {
        tokenOf: async () => linked(),
        unlinkIf: async (owner, token) => {
          if (linked() !== token) return false;
          unlinked.push(owner.user);
          return true;
        },
      },
      sharedToken: SHARED,
      confirmRefusal: () => {
        confirmations += 1;
        return confirm();
      },
      onUnusable: (owner, reason) => told.push(`${owner.user} ${reason}`),
      onRefusalUnconfirmed: (owner) => told.push(`${owner.user} kept`),
    });
    return { source, unlinked, told, confirmations: () => confirmations };
  }

  it("is forgotten once the refusal is confirmed, and the person told", async () => {
    const x = identities(
      async () => true,
      () => TOKEN,
    );
    expect(await x.source.refused(credential)).toBe("forgotten");
    expect(x.unlinked).toEqual([ALICE.user]);
    expect(x.told).toEqual([`${ALICE.user} refused`]);
  });

  it("is kept when the refusal is not confirmed, or its check fails", async () => {
    const x = identities(
      async () => false,
      () => TOKEN,
    );
    expect(await x.source.refused(credential)).toBe("kept");
    const y = identities(
      () => Promise.reject(new Error("boom")),
      () => TOKEN,
    );
    expect(await y.source.refused(credential)).toBe("kept");
    expect([...x.unlinked, ...y.unlinked]).toEqual([]);
    expect([...x.told, ...y.told]).toEqual([`${ALICE.user} kept`, `${ALICE.user} kept`]);
  });

  it("is confirmed once for the requests refused together", async () => {
    let release: (confirmed: boolean) => void = () => {};
    const x = identities(
      () => new Promise((resolve) => (release = resolve)),
      () => TOKEN,
    );
    const refusals = [x.source.refused(credential), x.source.refused(credential)];
    release(true);
    expect(await Promise.all(refusals)).toEqual(["forgotten", "forgotten"]);
    expect(x.confirmations()).toBe(1);
    expect(x.unlinked).toEqual([ALICE.user]);
  });

  it("leaves a token linked anew while the refusal was checked", async () => {
    let current = TOKEN;
    const x = identities(
      async () => {
        current = "pat-alice-new-0123456789";
        return true;
      },
      () => current,
    );
    await x.source.refused(credential);
    expect(x.unlinked).toEqual([]);
    expect(current).toBe("pat-alice-new-0123456789");
  });
});
