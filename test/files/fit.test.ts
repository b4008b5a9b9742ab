import { describe, expect, it } from "vitest";
import { fitFiles } from "../../src/files/fit.js";

const lines = (name: string, count: number) =>
  Array.from({ length: count }, (_, i) => `${name} line ${i + 1}`).join("\n");

describe("the files' text within the budget", () => {
  it("introduces each file by its name and type, in order, when all fit", () => {
    const fitted = fitFiles(
      [
        { name: "a.py", type: "python", text: "print(1)\n" },
        { name: "b.csv", type: "csv", text: "x,y\n1,2" },
      ],
      1_000,
    );
    expect(fitted.text).toBe(
      "--- File: a.py (python) ---\nprint(1)\n--- End of a.py ---\n\n--- File: b.csv (csv) ---\nx,y\n1,2\n--- End of b.csv ---",
    );
    expect(fitted).toMatchObject({ cut: [], leftOut: [] });
  });

  it("keeps the beginning of a file that does not fit, in whole lines, and says how much is left out", () => {
    const text = lines("log", 200);
    const fitted = fitFiles([{ name: "app.log", type: "log", text }], 1_000);
    expect(fitted.text.length).toBeLessThanOrEqual(1_000);
    expect(fitted.text).toMatch(/^--- File: app\.log \(log\) ---\nlog line 1\nlog line 2\n/);
    const kept = fitted.text.split("\n").filter((l) => l.startsWith("log line"));
    const left = text.length - kept.join("\n").length;
    expect(fitted.text).toContain(
      `[… the rest of app.log (${left.toLocaleString("en-US")} characters) left out: it did not fit …]`,
    );
    expect(fitted.text.endsWith("--- End of app.log ---")).toBe(true);
    expect(fitted).toMatchObject({ cut: ["app.log"], leftOut: [] });
  });

  it("gives the room to the first files (the question's) and leaves out what no longer fits", () => {
    const fitted = fitFiles(
      [
        { name: "question.txt", type: "text", text: lines("q", 80) },
        { name: "thread.txt", type: "text", text: lines("t", 40) },
      ],
      600,
    );
    expect(fitted.text).toContain("q line 1\n");
    expect(fitted.text).not.toContain("t line 1");
    expect(fitted).toMatchObject({ cut: ["question.txt"], leftOut: ["thread.txt"] });
  });
});
