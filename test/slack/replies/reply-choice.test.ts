import { describe, expect, it } from "vitest";
import type {
  ReplyRecorder,
  ReplyRenderer,
  ReplyStrategy,
  ReplyTarget,
  ReplyView,
} from "../../../src/bridge/ports.js";
import type { NativeStream } from "../../../src/slack/replies/native-stream.js";
import { ReplyChoice } from "../../../src/slack/replies/reply-choice.js";
import { ManualClock } from "../../support/manual-clock.js";

/** A strategy that only says which way each reply went and what it was asked. */
class Way implements ReplyStrategy {
  readonly used: string[] = [];
  readonly resumed: string[] = [];

  constructor(private readonly name: string) {}

  render(target: ReplyTarget): ReplyRenderer {
    this.used.push(target.turnId);
    return {
      open: async () => {},
      show: () => {},
      finish: async () => {},
    };
  }

  async resume(target: ReplyTarget, _recorder: ReplyRecorder): Promise<ReplyRenderer> {
    this.resumed.push(target.turnId);
    return this.render(target);
  }

  toString(): string {
    return this.name;
  }
}

const recorder: ReplyRecorder = { parts: async () => {}, posting: async () => {} };
const working: ReplyView = { body: "", phase: { kind: "starting" }, notes: [] };

function setup(waits: Record<string, number> = {}, startsPerMinute?: number) {
  const stream = new Way("stream");
  const edits = new Way("edits");
  const wait = { ...waits };
  const clock = new ManualClock();
  const choice = new ReplyChoice({
    edits,
    native: stream as unknown as NativeStream,
    budgets: { waitFor: (_team, method) => wait[method] ?? 0 },
    ...(startsPerMinute ? { starts: { perMinute: startsPerMinute, clock } } : {}),
  });
  let n = 0;
  const reply = (more: Partial<ReplyTarget> = {}) => {
    const turnId = `t${++n}`;
    const target: ReplyTarget = {
      turnId,
      team: "T1",
      channel: "C1",
      threadTs: "1.1",
      asker: "U1",
      parts: [],
      ...more,
    };
    return { turnId, renderer: choice.render(target, recorder) };
  };
  /** Opens a reply and says which way it went. */
  const open = async (more: Partial<ReplyTarget> = {}, view = working) => {
    const { turnId, renderer } = reply(more);
    await renderer.open(view);
    return { way: stream.used.includes(turnId) ? "stream" : "edits", renderer };
  };
  return { stream, edits, wait, choice, reply, open, clock };
}

describe("ReplyChoice", () => {
  it("streams every answer the minute's starts have room for, however many are going", async () => {
    const s = setup({}, 10);
    const ways: string[] = [];
    for (let i = 0; i < 12; i++) ways.push((await s.open()).way);
    // Ten at once, all still going: the starts' window, not a share of appends, decides.
    expect(ways).toEqual([...Array(10).fill("stream"), "edits", "edits"]);
  });

  it("edits once the Tier 2 budget of starts or stops would hold the placeholder back", async () => {
    const s = setup({ "chat.startStream": 1_001 });
    expect((await s.open()).way).toBe("edits");
    s.wait["chat.startStream"] = 1_000;
    expect((await s.open()).way).toBe("stream");
    s.wait["chat.stopStream"] = 5_000;
    expect((await s.open()).way).toBe("edits");
  });

  it("counts the streams chosen in a minute, before their starts spend the budget", async () => {
    const s = setup({}, 2);
    const ways: string[] = [];
    for (let i = 0; i < 3; i++) {
      // Each answer ends before the next opens: only the minute's count holds a stream back.
      const { way, renderer } = await s.open();
      await renderer.finish(working);
      ways.push(way);
    }
    expect(ways).toEqual(["stream", "stream", "edits"]);
    expect((await s.open({ team: "T2" })).way).toBe("stream");
    // Slack's minute is counted with a second's margin (budgets/window.ts).
    await s.clock.advance(60_000);
    expect((await s.open()).way).toBe("edits");
    await s.clock.advance(1_000);
    expect((await s.open()).way).toBe("stream");
  });

  it("edits a reply queued behind another, one without an asker, and one that ends unopened", async () => {
    const s = setup();
    const queued: ReplyView = { ...working, phase: { kind: "queued", ahead: 1, where: "thread" } };
    expect((await s.open({}, queued)).way).toBe("edits");
    expect((await s.open({ asker: "" })).way).toBe("edits");
    const { turnId, renderer } = s.reply();
    await renderer.finish({ ...working, phase: { kind: "stopped" } });
    expect(s.edits.used).toContain(turnId);
  });

  it("resumes a reply that has messages through the stream's resume (it stops what may stream)", async () => {
    const s = setup();
    const { turnId, renderer } = s.reply({ parts: ["9.1"] });
    await renderer.open(working);
    expect(s.stream.resumed).toEqual([turnId]);
    const attempted = s.reply({ postsAttempted: 1 });
    await attempted.renderer.open(working);
    expect(s.stream.resumed).toEqual([turnId, attempted.turnId]);
  });

  it("stops streaming where Slack refused: in the channel, or in the whole workspace", async () => {
    const s = setup();
    const target = { turnId: "x", team: "T1", channel: "C1", threadTs: "1", parts: [] };
    s.choice.refuse(target, "channel_type_not_supported");
    expect((await s.open()).way).toBe("edits");
    expect((await s.open({ channel: "C2" })).way).toBe("stream");
    s.choice.refuse(target, "missing_scope");
    expect((await s.open({ channel: "C2" })).way).toBe("edits");
    expect((await s.open({ team: "T2" })).way).toBe("stream");
  });

  it("edits every reply when streaming is off", async () => {
    const edits = new Way("edits");
    const choice = new ReplyChoice({
      edits,
      native: undefined,
      budgets: { waitFor: () => 0 },
    });
    const target = {
      turnId: "a",
      team: "T1",
      channel: "C1",
      threadTs: "1",
      asker: "U1",
      parts: [],
    };
    await choice.render(target, recorder).open(working);
    expect(edits.used).toEqual(["a"]);
  });
});
