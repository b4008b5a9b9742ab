import type { BenchOptions } from "./args.js";
import type { RepFigures, Row } from "./report.js";
import type { ScenarioOptions } from "./scenario.js";

/**
 * A setup run beside the bot in every repetition, on fresh fakes and the same workload: Slack's
 * own agent template (--with-template), or one bot on SQLite or PostgreSQL (--beside).
 */
export interface Side {
  /** Its name in the report. */
  name: string;
  /** What it changes of the run's own options. */
  setup: Pick<ScenarioOptions, "postgres" | "replicas" | "template">;
  /** Each repetition's figures, in the order run. */
  repetitions: RepFigures[];
  /** One per scenario, as for the run itself. */
  rows: Row[];
}

/** The sides the options ask for: the databases named by --beside, then the template. */
export function sidesOf(options: BenchOptions): Side[] {
  const sides: Side[] = options.beside.map((database) => ({
    name: database === "sqlite" ? "one bot on SQLite" : "one bot on PostgreSQL",
    setup: { postgres: database === "postgres", replicas: 1, template: false },
    repetitions: [],
    rows: [],
  }));
  if (options.withTemplate) {
    sides.push({
      name: "Slack's agent template",
      setup: { postgres: false, replicas: 1, template: true },
      repetitions: [],
      rows: [],
    });
  }
  return sides;
}

/**
 * Who runs in turn in repetition `rep` (from 1): undefined is the run itself, a number that
 * side. Every other repetition the sides go first, so that the machine's drift, and what one
 * run leaves to the next (a warm server, a busy disk), fall on both alike.
 */
export function turns(rep: number, sides: number): (number | undefined)[] {
  const theirs = Array.from({ length: sides }, (_, i) => i);
  return rep % 2 === 1 ? [undefined, ...theirs] : [...theirs, undefined];
}
