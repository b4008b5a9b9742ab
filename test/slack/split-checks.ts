import { expect } from "vitest";
import { escapeMrkdwn } from "../../src/slack/render/mrkdwn.js";
import { endsInsideFence, fenceStates } from "./markdown-samples.js";

export interface Limits {
  soft: number;
  hard: number;
  escaped: number;
}
export const DEFAULTS: Limits = { soft: 3_800, hard: 11_000, escaped: 36_000 };
export const optionsOf = (l: Limits) => ({
  softLimit: l.soft,
  hardLimit: l.hard,
  escapedLimit: l.escaped,
});

export const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
export const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/**
 * Checks a split against the text with the test's own fence reading: the parts are the text
 * in order with only the newline at each line cut dropped; a line cut inside code happens
 * only in a block longer than hardLimit, a cut inside a line only in a line longer than it
 * (and never between a surrogate pair); every part is within the limits, and over softLimit
 * only when no line boundary outside code was within softLimit of its start; a part that
 * starts outside code is balanced on its own exactly when the text is balanced at its end.
 * Returns how many cuts were inside lines.
 */
export function checkParts(text: string, parts: string[], limits: Limits): number {
  const lines = text.split("\n");
  const openAfter = fenceStates(text);
  const lineStarts: number[] = [];
  for (let i = 0, at = 0; i < lines.length; i++) {
    lineStarts.push(at);
    at += (lines[i] as string).length + 1;
  }
  const lineOf = (offset: number) => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if ((lineStarts[mid] as number) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  const openBefore = (offset: number) => {
    const line = lineOf(offset);
    return line > 0 && openAfter[line - 1] === true;
  };
  /** Length of the fenced block that the line belongs to, from its opening line to its close. */
  const blockLength = (line: number) => {
    let first = line;
    while (first > 0 && openAfter[first - 1]) first--;
    let last = line;
    while (last < lines.length - 1 && openAfter[last]) last++;
    const end = (lineStarts[last] as number) + (lines[last] as string).length;
    return end - (lineStarts[first] as number);
  };

  let pos = 0;
  let insideLine = 0;
  parts.forEach((part, i) => {
    const start = pos;
    expect(text.startsWith(part, pos)).toBe(true);
    expect(part.length).toBeLessThanOrEqual(limits.hard);
    expect(escapeMrkdwn(part).length).toBeLessThanOrEqual(limits.escaped);
    pos += part.length;
    const isLast = i === parts.length - 1;
    if (!isLast && text[pos] === "\n") {
      const line = lineOf(pos);
      if (openAfter[line]) expect(blockLength(line)).toBeGreaterThan(limits.hard);
      pos++;
    } else if (!isLast) {
      insideLine++;
      expect((lines[lineOf(pos)] as string).length).toBeGreaterThan(limits.hard);
      expect(isHigh(text.charCodeAt(pos - 1)) && isLow(text.charCodeAt(pos))).toBe(false);
    }
    if (part.length > limits.soft && !(isLast && part.trimEnd().length <= limits.soft)) {
      for (
        let c = text.indexOf("\n", start);
        c !== -1 && c <= start + limits.soft;
        c = text.indexOf("\n", c + 1)
      ) {
        const cutOutside = !openAfter[lineOf(c)];
        expect(cutOutside && /\S/.test(text.slice(start, c))).toBe(false);
      }
    }
    if (!openBefore(start) && part.length > 0) {
      expect(endsInsideFence(part)).toBe(openAfter[lineOf(start + part.length - 1)] === true);
    }
  });
  expect(pos).toBe(text.length);
  return insideLine;
}
