import type { SimulatorRunSettings } from "./resources.js";
import { owned, type Route, type RouteDeps } from "./routes.js";
import { encodeRunEvent, isSseDialect, type RunStreamEvent, SSE_DIALECTS } from "./sse.js";
import { parseBody, StartRunBody } from "./validation.js";
import { HttpError } from "./wire.js";

/** Runs: interface §4 POST /v1/thread/{id}/runs, GET /v1/run/{id}, stream, stop. */
export function runRoutes({ state, faults, streams }: RouteDeps): Route[] {
  const ownRun = (id: string, token: string) => owned("run", id, state.run(id, token));

  return [
    {
      method: "POST",
      pattern: "/v1/thread/:id/runs",
      kind: "run_start",
      body: "json",
      handle: ({ token, id, body, countRunStart }) => {
        const thread = owned("thread", id, state.thread(id, token));
        const request = parseBody(StartRunBody, body);
        const trigger = state.messages(thread.id).find((m) => m.id === request.triggerMessageId);
        if (trigger === undefined) {
          throw new HttpError(400, "triggerMessageId must be the id of a message of this thread");
        }
        const settings: SimulatorRunSettings = {};
        if (request.modelOverride !== undefined) settings.modelOverride = request.modelOverride;
        if (request.reasoning_effort !== undefined) {
          settings.reasoning_effort = request.reasoning_effort;
        }
        if (request.maxSteps !== undefined) settings.maxSteps = request.maxSteps;
        const lifecycle = state.startRun({ thread, trigger, settings, hang: faults.hangRuns });
        countRunStart();
        return { status: 201, body: lifecycle.run };
      },
    },
    {
      method: "GET",
      pattern: "/v1/run/:id",
      kind: "request",
      body: "ignore",
      handle: ({ token, id }) => ({ status: 200, body: ownRun(id, token).run }),
    },
    {
      method: "POST",
      pattern: "/v1/runs/:id/stop",
      kind: "request",
      body: "ignore",
      handle: ({ token, id }) => {
        const lifecycle = ownRun(id, token);
        lifecycle.stop();
        return { status: 200, body: lifecycle.run };
      },
    },
    {
      method: "GET",
      pattern: "/v1/run/:id/stream",
      kind: "request",
      body: "ignore",
      handle: ({ token, id, query, openStream }) => {
        const lifecycle = ownRun(id, token);
        const dialect = query.dialect ?? streams.dialect;
        if (!isSseDialect(dialect)) {
          throw new HttpError(400, `dialect must be one of ${SSE_DIALECTS.join(", ")}`);
        }
        const writer = openStream();
        const send = (event: RunStreamEvent) => writer.send(encodeRunEvent(dialect, event));
        // Replay the status, each step as it now is and what was written so far as one
        // increment, then follow live.
        const { run, written } = lifecycle;
        if (!lifecycle.ended) send({ type: "status", written, run });
        for (const step of lifecycle.steps.values()) send({ type: "step", step, written, run });
        if (written !== "") send({ type: "delta", text: written, written, run });
        if (lifecycle.ended) {
          send({ type: "end", written, run });
          writer.end();
          return undefined;
        }
        const unsubscribe = lifecycle.subscribe((event) => {
          send(event);
          if (event.type === "end") writer.end();
        });
        writer.onClose(unsubscribe);
        return undefined;
      },
    },
  ];
}
