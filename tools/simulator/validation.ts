import { z } from "zod";
import {
  MAX_STEPS_MAX,
  MAX_STEPS_MIN,
  MODEL_OVERRIDES,
  REASONING_EFFORTS,
} from "../../src/service/schemas.js";
import { HttpError } from "./wire.js";

/**
 * Request bodies the simulator accepts, as zod schemas whose messages name the field and
 * the rule. Unknown extra fields are accepted and ignored, as the brief of the interface
 * leaves room for fields it does not show.
 */

const nonBlank = (value: string) => value.trim() !== "";

export const CreateThreadBody = z.object({
  assistantId: z
    .string({ error: "assistantId is required and must be a string" })
    .refine(nonBlank, { error: "assistantId must not be empty" }),
  title: z.string({ error: "title must be a string" }).optional(),
});

export const PostMessageBody = z.object({
  content: z.string({ error: "content is required and must be a string" }),
});

const stepsRule = `maxSteps must be an integer from ${MAX_STEPS_MIN} to ${MAX_STEPS_MAX}`;

export const StartRunBody = z.object({
  triggerMessageId: z
    .string({ error: "triggerMessageId is required and must be a string" })
    .min(1, { error: "triggerMessageId must not be empty" }),
  modelOverride: z
    .enum(MODEL_OVERRIDES, { error: `modelOverride must be one of ${MODEL_OVERRIDES.join(", ")}` })
    .optional(),
  reasoning_effort: z
    .enum(REASONING_EFFORTS, {
      error: `reasoning_effort must be one of ${REASONING_EFFORTS.join(", ")}`,
    })
    .optional(),
  maxSteps: z
    .number({ error: stepsRule })
    .int({ error: stepsRule })
    .min(MAX_STEPS_MIN, { error: stepsRule })
    .max(MAX_STEPS_MAX, { error: stepsRule })
    .optional(),
});

const ChatMessage = z.object(
  {
    role: z.string({ error: "every message needs a string role" }),
    content: z.string({
      error: "message content must be a string (images and content parts are refused)",
    }),
  },
  { error: "every message must be an object with role and content" },
);

export const ChatCompletionBody = z
  .object({
    assistantId: z
      .string({ error: "assistantId must be a string" })
      .refine(nonBlank, { error: "assistantId must not be empty" })
      .optional(),
    threadId: z
      .string({ error: "threadId must be a string" })
      .min(1, { error: "threadId must not be empty" })
      .optional(),
    stream: z.boolean({ error: "stream must be a boolean" }).optional(),
    messages: z
      .array(z.unknown(), { error: "messages is required and must be an array" })
      .min(1, { error: "messages must not be empty" })
      // Tool messages are refused before their shape is looked at (interface §4 rule 1).
      .refine((items) => !items.some(isToolMessage), {
        error: "messages with role tool are refused; the assistant calls its own tools",
      })
      .pipe(z.array(ChatMessage))
      .refine((items) => items.some((m) => m.role === "user"), {
        error: "messages must include a user message",
      }),
    model: z.string({ error: "model must be a string" }).optional(),
  })
  .refine((body) => body.assistantId !== undefined || body.threadId !== undefined, {
    error: "either assistantId or threadId is required",
  });

function isToolMessage(item: unknown): boolean {
  return typeof item === "object" && item !== null && (item as { role?: unknown }).role === "tool";
}

/** Parses `body` or throws a 400 naming the first problem. */
export function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  throw new HttpError(400, result.error.issues[0]?.message ?? "invalid request body");
}
