/**
 * The `table` block as Slack checks it (Block Kit reference, table block): `rows` of at most
 * 100 rows, each an array of 1..20 cells, every cell `raw_text` (`{type, text}`) or
 * `rich_text`; optional `column_settings`, at most 20, `align` left/center/right and
 * `is_wrapped` a boolean. One table a message (Slack's usage notes, as reported by several
 * projects). A message that breaks a rule is refused with `invalid_blocks`.
 */
export const MAX_TABLE_ROWS = 100;
export const MAX_TABLE_CELLS = 20;
export const MAX_COLUMN_SETTINGS = 20;
const ALIGNS = new Set(["left", "center", "right"]);

type Record_ = Record<string, unknown>;

function isRecord(value: unknown): value is Record_ {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function cellOk(cell: unknown): boolean {
  if (!isRecord(cell)) return false;
  if (cell.type === "raw_text") return typeof cell.text === "string";
  return cell.type === "rich_text" && Array.isArray(cell.elements);
}

function rowOk(row: unknown): boolean {
  return (
    Array.isArray(row) && row.length >= 1 && row.length <= MAX_TABLE_CELLS && row.every(cellOk)
  );
}

function settingOk(setting: unknown): boolean {
  if (!isRecord(setting)) return false;
  if (setting.align !== undefined && !ALIGNS.has(setting.align as string)) return false;
  return setting.is_wrapped === undefined || typeof setting.is_wrapped === "boolean";
}

/** Whether one `table` block is well formed and within Slack's limits. */
export function tableOk(block: Record_): boolean {
  const { rows, column_settings: settings } = block;
  if (!Array.isArray(rows) || rows.length < 1 || rows.length > MAX_TABLE_ROWS) return false;
  if (!rows.every(rowOk)) return false;
  if (settings === undefined) return true;
  return (
    Array.isArray(settings) && settings.length <= MAX_COLUMN_SETTINGS && settings.every(settingOk)
  );
}

/** The Slack error of a message's table blocks (`invalid_blocks`), or undefined when they pass. */
export function tablesError(blocks: readonly ({ type: string } & Record_)[]): string | undefined {
  const tables = blocks.filter((block) => block.type === "table");
  if (tables.length > 1) return "invalid_blocks";
  return tables.every(tableOk) ? undefined : "invalid_blocks";
}
