import { z } from "zod";

/**
 * Zod schemas of the service's resources (interface §2). Responses are parsed, not
 * trusted; every object schema is loose so that fields the interface does not show
 * pass through untouched.
 */

export const RUN_STATUSES = ["queued", "in_progress", "completed", "failed", "canceled"] as const;
export const RunStatusSchema = z.enum(RUN_STATUSES);
export type RunStatus = z.infer<typeof RunStatusSchema>;

const END_STATUSES: ReadonlySet<RunStatus> = new Set(["completed", "failed", "canceled"]);
/** Interface §3: a client stops following a run once it has one of these. */
export function isEndStatus(status: RunStatus): boolean {
  return END_STATUSES.has(status);
}

export const MODEL_OVERRIDES = ["flash", "max"] as const;
export const REASONING_EFFORTS = ["none", "low", "medium", "high"] as const;
export const MAX_STEPS_MIN = 1;
export const MAX_STEPS_MAX = 500;

export const RunSettingsSchema = z.object({
  modelOverride: z.enum(MODEL_OVERRIDES).optional(),
  reasoning_effort: z.enum(REASONING_EFFORTS).optional(),
  maxSteps: z.number().int().min(MAX_STEPS_MIN).max(MAX_STEPS_MAX).optional(),
});
export type RunSettings = z.infer<typeof RunSettingsSchema>;

/** The body of a run start: the trigger message and the settings that are set. */
export type RunStartBody = { triggerMessageId: string } & RunSettings;

export const ThreadSchema = z.looseObject({
  id: z.string().min(1),
  assistantId: z.string().optional(),
  title: z.string().nullish(),
});
export type Thread = z.infer<typeof ThreadSchema>;

export const MessageSchema = z.looseObject({
  id: z.string().min(1),
  content: z.string().nullish(),
  role: z.string().nullish(),
});
export type Message = z.infer<typeof MessageSchema>;

export const RunOutputItemSchema = z.looseObject({
  type: z.string(),
  text: z.string().nullish(),
});

export const RunSchema = z.looseObject({
  id: z.string().min(1),
  threadId: z.string().nullish(),
  assistantId: z.string().nullish(),
  status: RunStatusSchema,
  output: z.array(RunOutputItemSchema).nullish(),
  modelUsed: z.string().nullish(),
  error: z.string().nullish(),
});
export type Run = z.infer<typeof RunSchema>;

/** The answer of a run is the `text` of the first output item (interface §2). */
export function runAnswer(run: Run): string | undefined {
  const first = run.output?.[0];
  return first?.text ?? undefined;
}
