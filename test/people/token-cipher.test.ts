import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { openToken, sealToken, TokenSealBroken } from "../../src/people/token-cipher.js";

const KEY = randomBytes(32);
const ALICE = { team: "T1", user: "U0ALICE" };
const TOKEN = "pat-alice-0123456789abcdef";

describe("a sealed token", () => {
  it("opens with the key for its owner, and never holds the token's bytes", () => {
    const sealed = sealToken(KEY, ALICE, TOKEN);
    expect(openToken(KEY, ALICE, sealed)).toBe(TOKEN);
    expect(sealed.includes(Buffer.from(TOKEN))).toBe(false);
    expect(sealed.includes(Buffer.from("pat-alice"))).toBe(false);
  });

  it("takes a fresh nonce each time: the same token seals differently", () => {
    const a = sealToken(KEY, ALICE, TOKEN);
    const b = sealToken(KEY, ALICE, TOKEN);
    expect(a.equals(b)).toBe(false);
    expect(a.subarray(1, 13).equals(b.subarray(1, 13))).toBe(false);
  });

  it("does not open for another person or workspace (a row moved), nor under another key", () => {
    const sealed = sealToken(KEY, ALICE, TOKEN);
    expect(() => openToken(KEY, { team: "T1", user: "U0BOB" }, sealed)).toThrow(TokenSealBroken);
    expect(() => openToken(KEY, { team: "T2", user: "U0ALICE" }, sealed)).toThrow(TokenSealBroken);
    expect(() => openToken(randomBytes(32), ALICE, sealed)).toThrow(TokenSealBroken);
  });

  it("does not open when a byte was changed or cut, and says nothing of the token", () => {
    const sealed = sealToken(KEY, ALICE, TOKEN);
    for (const index of [0, 5, 20, sealed.length - 1]) {
      const bent = Buffer.from(sealed);
      bent[index] = (bent[index] as number) ^ 1;
      expect(() => openToken(KEY, ALICE, bent)).toThrow(TokenSealBroken);
    }
    expect(() => openToken(KEY, ALICE, sealed.subarray(0, 20))).toThrow(
      "a linked token could not be opened with this key for this person",
    );
  });
});
