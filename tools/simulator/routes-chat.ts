import type { SimulatorRun } from "./resources.js";
import { owned, type Route, type RouteDeps } from "./routes.js";
import { DONE_FRAME, sseFrame } from "./sse.js";
import { estimateTokens } from "./tokens.js";
import { ChatCompletionBody, parseBody } from "./validation.js";

/**
 * POST /v1/agents/chat/completions (interface §4): one conversation turn in OpenAI
 * format. The last user message is posted into the thread (a new one for `assistantId`,
 * the given one for `threadId`) and a run is started on it, which counts as a run start.
 * Streamed, the run's increments become `chat.completion.chunk` events; not streamed,
 * the answer is an immediate `finish_reason: "queued"` with `thread_id`, `message_id` and
 * `run_id` to follow the run by. `model`, when sent, is reported as the run's `modelUsed`.
 */
export function chatRoutes({ state, faults, now }: RouteDeps): Route[] {
  return [
    {
      method: "POST",
      pattern: "/v1/agents/chat/completions",
      kind: "run_start",
      body: "json",
      handle: ({ token, body, countRunStart, openStream }) => {
        const request = parseBody(ChatCompletionBody, body);
        let thread =
          request.threadId === undefined
            ? undefined
            : owned("thread", request.threadId, state.thread(request.threadId, token));
        const question = request.messages.findLast((m) => m.role === "user")?.content ?? "";
        thread ??= state.createThread(token, request.assistantId ?? "", undefined);
        const trigger = state.addMessage(thread.id, question);
        const lifecycle = state.startRun({
          thread,
          trigger,
          settings: {},
          hang: faults.hangRuns,
          ...(request.model === undefined ? {} : { modelUsed: request.model }),
        });
        countRunStart();
        const promptTokens = estimateTokens(request.messages.map((m) => m.content).join(""));
        const usage = {
          prompt_tokens: promptTokens,
          completion_tokens: 0,
          total_tokens: promptTokens,
        };
        const head = {
          id: `chatcmpl-${lifecycle.run.id}`,
          created: Math.floor(now() / 1000),
          model: lifecycle.model,
        };
        if (request.stream !== true) {
          return {
            status: 200,
            body: {
              ...head,
              object: "chat.completion",
              choices: [
                {
                  index: 0,
                  message: { role: "assistant", content: "" },
                  finish_reason: "queued",
                },
              ],
              usage,
              thread_id: thread.id,
              message_id: trigger.id,
              run_id: lifecycle.run.id,
            },
          };
        }
        const writer = openStream();
        const chunk = (delta: Record<string, string>, finish: string | null, extra = {}) =>
          sseFrame(
            JSON.stringify({
              ...head,
              object: "chat.completion.chunk",
              choices: [{ index: 0, delta, finish_reason: finish }],
              ...extra,
            }),
          );
        // The first chunk carries the role, as OpenAI's do.
        writer.send([chunk({ role: "assistant", content: "" }, null)]);
        const unsubscribe = lifecycle.subscribe((event) => {
          if (event.type === "delta") writer.send([chunk({ content: event.text }, null)]);
          if (event.type !== "end") return;
          writer.send([chunk({}, finishReason(event.run), { usage }), DONE_FRAME]);
          writer.end();
        });
        writer.onClose(unsubscribe);
        return undefined;
      },
    },
  ];
}

function finishReason(run: SimulatorRun): string {
  if (run.status === "completed") return "stop";
  if (run.status === "failed") return "error";
  return "canceled";
}
