import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/** The bot's Prometheus metrics, on a registry of its own (no global state). */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "bridge_" });
  const m = {
    registry,
    turns: new Counter({
      name: "bridge_turns_total",
      help: "Answered Slack messages by outcome (completed, failed, stopped, error).",
      labelNames: ["outcome"] as const,
      registers: [registry],
    }),
    runs: new Counter({
      name: "bridge_runs_total",
      help: "Runs that reached an end status, by status.",
      labelNames: ["status"] as const,
      registers: [registry],
    }),
    inbound: new Counter({
      name: "bridge_inbound_total",
      help: "Slack messages received, by what was done with them (accepted, duplicate, ignored, malformed).",
      labelNames: ["result"] as const,
      registers: [registry],
    }),
    slackRateLimited: new Counter({
      name: "bridge_slack_rate_limited_total",
      help: "429 answers from Slack.",
      labelNames: ["method"] as const,
      registers: [registry],
    }),
    serviceRateLimited: new Counter({
      name: "bridge_service_rate_limited_total",
      help: "429 answers from the assistant service.",
      registers: [registry],
    }),
    edits: new Counter({
      name: "bridge_slack_edits_total",
      help: "chat.update calls made, by kind (interim, final).",
      labelNames: ["kind"] as const,
      registers: [registry],
    }),
    firstText: new Histogram({
      name: "bridge_time_to_first_text_seconds",
      help: "From the question's arrival to the first answer text the bot sent to Slack.",
      buckets: [0.25, 0.5, 1, 2, 5, 10, 30, 60],
      registers: [registry],
    }),
    queueLength: new Gauge({
      name: "bridge_service_queue_length",
      help: "Calls waiting for the service budget, by kind.",
      labelNames: ["kind"] as const,
      registers: [registry],
    }),
    pendingEdits: new Gauge({
      name: "bridge_slack_pending_edits",
      help: "Replies with an edit waiting for the Slack budget.",
      registers: [registry],
    }),
    activeConversations: new Gauge({
      name: "bridge_active_conversations",
      help: "Conversations with a turn being worked on or waiting.",
      registers: [registry],
    }),
  };
  return m;
}

export type Metrics = ReturnType<typeof createMetrics>;
