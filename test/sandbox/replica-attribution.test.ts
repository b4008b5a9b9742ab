/** How the sandbox tells replicas apart: their start line, their lease holder name, takeovers. */
import { describe, expect, it } from "vitest";
import { withTakeovers } from "../../sandbox/replica-bots.js";
import { type Replica, replicaOfHolder, startedPort } from "../../sandbox/replicas.js";

const replica = (number: number, pid: number) => ({ number, pid }) as Replica;

describe("replica attribution", () => {
  it("reads the port of the start line only", () => {
    expect(startedPort('{"level":30,"port":4242,"msg":"assistant bridge started"}')).toBe(4242);
    expect(startedPort('{"port":4242,"msg":"turn accepted"}')).toBeUndefined();
    expect(startedPort("assistant bridge started, not JSON")).toBeUndefined();
  });

  it("names a lease holder (host:pid:random) by its pid", () => {
    const list = [replica(1, 100), replica(2, 200)];
    expect(replicaOfHolder("box:200:ab12cd34", list)).toBe(2);
    expect(replicaOfHolder("my:host:100:ab12cd34", list)).toBe(1);
    expect(replicaOfHolder("box:300:ab12cd34", list)).toBeUndefined();
  });

  it("adds takeovers the holder readings missed", () => {
    expect(withTakeovers([1], [2])).toEqual([1, 2]);
    expect(withTakeovers([1, 2], [2])).toEqual([1, 2]);
    expect(withTakeovers([], [])).toEqual([]);
  });
});
