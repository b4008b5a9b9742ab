import { describe, expect, it } from "vitest";
import { decodeText } from "../../src/files/text.js";

describe("a file's bytes as text", () => {
  it("reads UTF-8, dropping a byte order mark, with characters of several bytes", () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("naïve – 東京\n")]);
    expect(decodeText(bytes)).toBe("naïve – 東京\n");
  });

  it("reads bytes that are not UTF-8 as Windows-1252", () => {
    expect(decodeText(Buffer.from([0x63, 0x61, 0x66, 0xe9]))).toBe("café");
  });

  it("takes bytes with a NUL for a binary", () => {
    expect(decodeText(Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x00, 0x00]))).toBeUndefined();
  });
});
