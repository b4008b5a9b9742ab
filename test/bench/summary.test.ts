import { afterEach, describe, expect, it } from "vitest";
import { disagreement, slack429ByMethod } from "../../bench/summary.js";
import { type FakeSlack, startFakeSlack } from "../../tools/fake-slack/server.js";

let slack: FakeSlack | undefined;
afterEach(async () => {
  await slack?.close();
  slack = undefined;
});

describe("Slack's 429s by method", () => {
  it("counts each method's 429s from the fake's limits, leaving out methods that met none", async () => {
    slack = await startFakeSlack({ limits: { "auth.test": 1, "users.info": 2 } });
    const call = (method: string) =>
      fetch(`${slack?.apiUrl}${method}`, {
        method: "POST",
        headers: { authorization: "Bearer xoxb-test", "content-type": "application/json" },
        body: JSON.stringify({ user: "UBOT" }),
      }).then((response) => response.status);
    const statuses: number[] = [];
    for (const method of ["auth.test", "auth.test", "users.info", "auth.test", "users.info"]) {
      statuses.push(await call(method));
    }
    statuses.push(await call("users.info"));
    // auth.test: one a minute, so its 2nd and 3rd; users.info: two, so its 3rd.
    expect(statuses).toEqual([200, 429, 200, 429, 200, 429]);
    const counted = slack429ByMethod(slack);
    expect(counted).toEqual({ "auth.test": 2, "users.info": 1 });
    expect(Object.keys(counted)).toEqual(["auth.test", "users.info"]);
    expect(slack.rateLimited).toBe(3);
  });

  it("is empty without a 429, however many calls", async () => {
    slack = await startFakeSlack({});
    for (let i = 0; i < 3; i++) {
      await fetch(`${slack.apiUrl}auth.test`, {
        method: "POST",
        headers: { authorization: "Bearer xoxb-test" },
      });
    }
    expect(slack.calls.length).toBe(3);
    expect(slack429ByMethod(slack)).toEqual({});
  });
});

describe("the bench against the outside view", () => {
  const ours = new Map([
    ["question 0", 25],
    ["question 1", 1_000],
  ]);

  it("is the largest difference for one answer", () => {
    expect(
      disagreement(ours, [
        { question: "question 0", ms: 25 },
        { question: "question 1", ms: 1_004 },
      ]),
    ).toBe(4);
  });

  it("is infinite when only one of them saw an answer's text, and NaN with nothing to compare", () => {
    expect(disagreement(ours, [{ question: "question 0", ms: undefined }])).toBe(Infinity);
    expect(disagreement(ours, [{ question: "question 2", ms: 30 }])).toBe(Infinity);
    expect(disagreement(ours, [{ question: "question 2", ms: undefined }])).toBe(0);
    expect(disagreement(ours, [])).toBeNaN();
  });
});
