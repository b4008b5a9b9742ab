import type { MODEL_OVERRIDES, REASONING_EFFORTS, RunStatus } from "../../src/service/schemas.js";

/**
 * The resources as the simulator serves them on the wire. They are plain JSON values
 * (no class instances) so that a snapshot is a structured clone away. Type aliases, not
 * interfaces, so that they are assignable to the loose zod types of service/schemas.ts.
 */

export type SimulatorThread = {
  id: string;
  assistantId: string;
  /** Present only when the creator sent one. */
  title?: string;
  /** ISO 8601. */
  createdAt: string;
};

export type SimulatorMessage = {
  id: string;
  threadId: string;
  role: "user" | "assistant";
  content: string;
  /** On assistant messages: the run that wrote them. */
  runId?: string;
  /** ISO 8601. */
  createdAt: string;
};

export type SimulatorRunSettings = {
  modelOverride?: (typeof MODEL_OVERRIDES)[number];
  reasoning_effort?: (typeof REASONING_EFFORTS)[number];
  maxSteps?: number;
};

export type SimulatorRun = {
  id: string;
  threadId: string;
  assistantId: string;
  status: RunStatus;
  /** Null until the run has completed (or, when canceled, holds the partial text). */
  output: { type: "text"; text: string }[] | null;
  /** Null while queued; set when the run starts working. */
  modelUsed: string | null;
  error: string | null;
  triggerMessageId: string;
  settings: SimulatorRunSettings;
  /** ISO 8601. */
  createdAt: string;
};

/** The model a run reports, from its settings (a script may still override it). */
export function modelForSettings(settings: SimulatorRunSettings): string {
  if (settings.modelOverride === "flash") return "assistant-flash";
  if (settings.modelOverride === "max") return "assistant-max";
  return "assistant-standard";
}
