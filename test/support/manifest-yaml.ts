/**
 * A reader of the block YAML that `manifest.yml` is written in (mappings, lists, plain and
 * quoted scalars, comments), strict about the rest: a tab, a duplicate key, an anchor, a
 * multi-line scalar or a flow collection other than `[]` / `{}` is an error naming its line,
 * so a manifest the test can read is one Slack's YAML reader reads the same way.
 */
export type Yaml = string | number | boolean | null | Yaml[] | { [key: string]: Yaml };

interface Line {
  no: number;
  indent: number;
  text: string;
}

class YamlError extends Error {
  constructor(line: Line | undefined, problem: string) {
    super(`manifest line ${line?.no ?? "end"}: ${problem}`);
  }
}

/** The line without its comment: a `#` at the start or after a space, outside quotes. */
function withoutComment(raw: string): string {
  let quote: string | undefined;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === "#" && (i === 0 || raw[i - 1] === " ")) return raw.slice(0, i).trimEnd();
  }
  return raw.trimEnd();
}

function scalar(text: string, line: Line): Yaml {
  if (text.startsWith('"')) {
    if (!text.endsWith('"') || text.length < 2) throw new YamlError(line, "unclosed quote");
    return JSON.parse(text) as string;
  }
  if (text.startsWith("'")) {
    if (!text.endsWith("'") || text.length < 2) throw new YamlError(line, "unclosed quote");
    return text.slice(1, -1).replace(/''/g, "'");
  }
  if (text === "[]") return [];
  if (text === "{}") return {};
  if (/^[[{&*!|>%@`]/.test(text)) throw new YamlError(line, `unsupported value "${text}"`);
  if (text === "true" || text === "false") return text === "true";
  if (text === "null" || text === "~") return null;
  if (/^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  if (/:\s|:$/.test(text)) throw new YamlError(line, `a plain value holds ": " — quote it`);
  return text;
}

const KEY = /^([A-Za-z0-9_.-]+):(?:\s+(.*))?$/;

export function readManifestYaml(source: string): Yaml {
  const lines: Line[] = [];
  source.split("\n").forEach((raw, i) => {
    if (/^\s*\t/.test(raw)) throw new YamlError({ no: i + 1, indent: 0, text: raw }, "a tab");
    const text = withoutComment(raw);
    if (text.trim() === "") return;
    lines.push({ no: i + 1, indent: text.length - text.trimStart().length, text: text.trim() });
  });
  let at = 0;

  /** The block whose lines are indented exactly `indent`. */
  const block = (indent: number): Yaml => {
    const first = lines[at];
    if (!first || first.indent !== indent) throw new YamlError(first, "expected a value here");
    return first.text.startsWith("- ") || first.text === "-" ? list(indent) : mapping(indent);
  };

  /** The value after `key:` on `line`: inline, or the block below it. */
  const valueAfter = (inline: string | undefined, line: Line, parentIndent: number): Yaml => {
    if (inline !== undefined && inline !== "") return scalar(inline, line);
    const next = lines[at];
    if (!next || next.indent <= parentIndent) return null;
    return block(next.indent);
  };

  /** A mapping at `indent`; a list item's first entry is on the item's own line. */
  const mapping = (indent: number, first?: Line & { item: string }): { [key: string]: Yaml } => {
    const out: { [key: string]: Yaml } = {};
    const entry = (text: string, line: Line) => {
      const match = KEY.exec(text);
      if (!match) throw new YamlError(line, `expected "key: value", got "${text}"`);
      const key = match[1] as string;
      if (Object.hasOwn(out, key)) throw new YamlError(line, `duplicate key "${key}"`);
      out[key] = valueAfter(match[2], line, indent);
    };
    if (first) entry(first.item, first);
    for (;;) {
      const line = lines[at];
      if (!line || line.indent < indent) return out;
      if (line.indent > indent) throw new YamlError(line, "unexpected indentation");
      at++;
      entry(line.text, line);
    }
  };

  const list = (indent: number): Yaml[] => {
    const out: Yaml[] = [];
    for (;;) {
      const line = lines[at];
      if (!line || line.indent < indent) return out;
      if (line.indent > indent || !(line.text.startsWith("- ") || line.text === "-")) {
        throw new YamlError(line, "expected a list item");
      }
      at++;
      const item = line.text.slice(1).trim();
      if (item === "") out.push(valueAfter(undefined, line, indent));
      else if (KEY.test(item)) out.push(mapping(indent + 2, { ...line, item }));
      else out.push(scalar(item, line));
    }
  };

  const doc = block(0);
  if (at < lines.length) throw new YamlError(lines[at], "unexpected indentation");
  return doc;
}
