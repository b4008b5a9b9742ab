import { describe, expect, it } from "vitest";
import { fileKind, fileName, fileType } from "../../src/files/kinds.js";

describe("what the bot can make of a shared file", () => {
  it.each([
    [{ id: "F1", mimetype: "text/plain", filetype: "text", name: "notes.txt" }, "text"],
    [
      { id: "F2", mimetype: "text/plain", filetype: "python", name: "a.py", mode: "snippet" },
      "text",
    ],
    [{ id: "F3", mimetype: "application/json", name: "data.json" }, "text"],
    [
      { id: "F4", mimetype: "application/octet-stream", filetype: "binary", name: "app.log" },
      "text",
    ],
    [{ id: "F5", mimetype: "application/pdf", filetype: "pdf", name: "report.pdf" }, "pdf"],
    [{ id: "F6", mimetype: "image/png", filetype: "png", name: "screen.png" }, "image"],
    [{ id: "F7", mimetype: "application/zip", filetype: "zip", name: "code.zip" }, "other"],
    [{ id: "F8", mimetype: "application/vnd.ms-excel", filetype: "xls", name: "s.xls" }, "other"],
    [{ id: "F9", mimetype: "text/csv; charset=utf-8", name: "table" }, "text"],
  ])("%o is %s", (file, kind) => {
    expect(fileKind(file)).toBe(kind);
  });

  it("names a file by its name, else its title, else its id, and types it by Slack's filetype", () => {
    expect(fileName({ id: "F1", name: "a.py", title: "Script" })).toBe("a.py");
    expect(fileName({ id: "F1", name: " ", title: "Script" })).toBe("Script");
    expect(fileName({ id: "F1" })).toBe("F1");
    expect(fileType({ id: "F1", filetype: "python", mimetype: "text/x-python" })).toBe("python");
    expect(fileType({ id: "F1", mimetype: "text/plain" })).toBe("text/plain");
  });
});
