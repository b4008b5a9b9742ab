import { Bridge } from "../bridge/bridge.js";
import type { Inbound } from "../bridge/inbound.js";
import type {
  AssistantService,
  ReplyStrategy,
  SharedFilesReader,
  ThreadHistory,
} from "../bridge/ports.js";
import { Relay } from "../bridge/turn/relay.js";
import { TurnContent } from "../bridge/turn/turn-content.js";
import { TurnRunner } from "../bridge/turn/turn-runner.js";
import type { Config } from "../config.js";
import type { Logger } from "../logger.js";
import type { Metrics } from "../observability/metrics.js";
import type { AssistantPick, Stores } from "../store/stores.js";
import type { Turn } from "../store/turn.js";
import type { Clock } from "../time.js";

/**
 * How often each replica looks for work nobody holds (a turn recorded while its conversation's
 * holder was handing it back, a dead replica's), ms.
 */
const SWEEP_MS = 2_000;

export interface CoreParts {
  config: Config;
  /** This process among the replicas sharing the database. */
  holder: string;
  clock: Clock;
  metrics: Metrics;
  logger: Logger;
  stores: Stores;
  service: AssistantService;
  replies: ReplyStrategy;
  history: ThreadHistory;
  files?: SharedFilesReader;
  /** The assistant a new conversation talks to; default ASSISTANT_ID. */
  assistantFor?: (inbound: Inbound) => string | AssistantPick;
  /** A turn ended, whatever its outcome (after the metrics). */
  onTurnFinished?: (turn: Turn) => void;
}

/** The bridge core over its ports: what is posted, how a turn runs, which turns run. */
export function wireCore(parts: CoreParts): Bridge {
  const { config, clock, metrics, logger, stores, service } = parts;
  const { conversations, turns, settings } = stores;
  const content = new TurnContent({
    history: parts.history,
    ...(parts.files && { files: parts.files }),
    turns,
    conversations,
    logger,
    budgetChars: config.limits.threadContextChars,
  });
  const runner = new TurnRunner({
    service,
    relay: new Relay(service, { clock }),
    turns,
    conversations,
    settings,
    content,
    logger,
    limits: config.limits,
    clock,
    durable: () => stores.durable(),
    events: {
      onFinished: (turn, outcome, runStatus) => {
        metrics.turns.inc({ outcome });
        if (runStatus) metrics.runs.inc({ status: runStatus });
        parts.onTurnFinished?.(turn);
      },
    },
  });
  return new Bridge({
    conversations,
    turns,
    leases: stores.leases,
    replica: { holder: parts.holder, leaseTtlMs: config.database.leaseTtlMs, sweepMs: SWEEP_MS },
    clock,
    onTakeover: () => metrics.takeovers.inc(),
    runner,
    logger,
    assistantFor: parts.assistantFor ?? (() => config.service.assistantId),
    replies: parts.replies,
    maxQueuedPerPerson: config.limits.maxQueuedTurnsPerPerson,
    onFirstText: (turn) => metrics.firstText.observe((clock.now() - turn.createdAt) / 1000),
    durable: () => stores.durable(),
  });
}
