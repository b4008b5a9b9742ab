import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/** Live figures read at scrape time, so a gauge is never staler than the scrape itself. */
export interface GaugeSources {
  /** Calls waiting for the service budget, per budget kind (run_start, request). */
  serviceQueues(): { kind: string; queued: number }[];
  /** Replies with an edit waiting for the Slack budget. */
  pendingEdits(): number;
  /** Conversations with a turn being worked on or waiting. */
  activeConversations(): number;
  /** Conversation leases this replica holds. */
  leasesHeld(): number;
}

/** Label values that exist from the start, so dashboards see 0 rather than no series. */
const OUTCOMES = ["completed", "failed", "stopped", "error"] as const;
const RUN_STATUSES = ["completed", "failed", "canceled"] as const;
const EDIT_KINDS = ["interim", "final"] as const;
const SLACK_METHODS = ["chat.update", "chat.postMessage"] as const;
const FEEDBACK_VALUES = ["positive", "negative"] as const;

/**
 * The bot's Prometheus metrics, on a registry of its own (no global state). Default
 * process metrics carry the `bridge_` prefix (`bridge_process_resident_memory_bytes`,
 * `bridge_process_cpu_seconds_total`, …).
 */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "bridge_" });
  let sources: GaugeSources | undefined;
  /** A counter on this registry, with at most one label. */
  const counter = <L extends string>(name: string, help: string, label?: L) =>
    new Counter<L>({ name, help, labelNames: label ? [label] : [], registers: [registry] });

  const m = {
    registry,
    turns: counter(
      "bridge_turns_total",
      "Answered Slack messages by outcome (completed, failed, stopped, error).",
      "outcome",
    ),
    runs: counter("bridge_runs_total", "Runs that reached an end status, by status.", "status"),
    inbound: counter(
      "bridge_inbound_total",
      "Slack messages received, by what was done with them (accepted, duplicate, ignored, malformed, refused, over_limit, deferred).",
      "result",
    ),
    slackRateLimited: counter(
      "bridge_slack_rate_limited_total",
      "429 answers from Slack.",
      "method",
    ),
    serviceRateLimited: counter(
      "bridge_service_rate_limited_total",
      "429 answers from the assistant service.",
    ),
    edits: counter(
      "bridge_slack_edits_total",
      "chat.update calls that landed, by kind (interim, final).",
      "kind",
    ),
    feedback: counter(
      "bridge_feedback_total",
      "Presses of the feedback buttons under answers that were recorded, by value (positive, negative); a person pressing again counts again.",
      "value",
    ),
    replies: counter(
      "bridge_slack_replies_total",
      "Answers by the way they were shown: stream (native streaming) or edits (chat.update).",
      "way",
    ),
    takeovers: counter(
      "bridge_conversation_takeovers_total",
      "Conversations this replica took over from a replica whose lease had expired (it died or stalled).",
    ),
    sharedBudgetWaits: counter(
      "bridge_shared_budget_waits_total",
      "Slack calls that found the budget they share with other replicas spent when they were due (another replica took it first), or gave way to an older call of another replica, and waited.",
    ),
    firstText: new Histogram({
      name: "bridge_time_to_first_text_seconds",
      help: "From the question's arrival to the first answer text the bot handed to Slack.",
      buckets: [0.25, 0.5, 1, 2, 5, 10, 30, 60],
      registers: [registry],
    }),
    queueLength: new Gauge({
      name: "bridge_service_queue_length",
      help: "Calls waiting for the service budget, by kind.",
      labelNames: ["kind"] as const,
      registers: [registry],
      collect() {
        // One lane per token and kind: the gauge is each kind's total over every token.
        const totals = new Map<string, number>();
        for (const lane of sources?.serviceQueues() ?? [])
          totals.set(lane.kind, (totals.get(lane.kind) ?? 0) + lane.queued);
        for (const [kind, queued] of totals) this.set({ kind }, queued);
      },
    }),
    pendingEdits: new Gauge({
      name: "bridge_slack_pending_edits",
      help: "Replies with an edit waiting for the Slack budget.",
      registers: [registry],
      collect() {
        if (sources) this.set(sources.pendingEdits());
      },
    }),
    activeConversations: new Gauge({
      name: "bridge_active_conversations",
      help: "Conversations with a turn being worked on or waiting.",
      registers: [registry],
      collect() {
        if (sources) this.set(sources.activeConversations());
      },
    }),
    leasesHeld: new Gauge({
      name: "bridge_conversation_leases_held",
      help: "Conversations whose turns this replica runs (it holds their lease).",
      registers: [registry],
      collect() {
        if (sources) this.set(sources.leasesHeld());
      },
    }),
    peakRss: new Gauge({
      name: "bridge_process_peak_resident_memory_bytes",
      help: "Largest resident set size the process has had, in bytes (getrusage maxrss).",
      registers: [registry],
      collect() {
        // maxRSS is in kilobytes.
        this.set(process.resourceUsage().maxRSS * 1024);
      },
    }),
    /** Tells the gauges where to read their figures; call once the parts exist. */
    watch(next: GaugeSources): void {
      sources = next;
    },
  };
  for (const outcome of OUTCOMES) m.turns.inc({ outcome }, 0);
  for (const status of RUN_STATUSES) m.runs.inc({ status }, 0);
  for (const kind of EDIT_KINDS) m.edits.inc({ kind }, 0);
  for (const method of SLACK_METHODS) m.slackRateLimited.inc({ method }, 0);
  for (const value of FEEDBACK_VALUES) m.feedback.inc({ value }, 0);
  return m;
}

export type Metrics = ReturnType<typeof createMetrics>;
