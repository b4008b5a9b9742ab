import { CanceledError, type RequestInfo } from "../../service/errors.js";
import type { CallOptions } from "../../service/http/http-request.js";
import { BudgetCanceled, type BudgetTicket } from "./budget.js";

/** A request's wait for its turn in the budget, and how the caller is told of it. */

export function takeOptions(opts: CallOptions): { party?: string; signal?: AbortSignal } {
  const out: { party?: string; signal?: AbortSignal } = {};
  if (opts.party !== undefined) out.party = opts.party;
  if (opts.signal !== undefined) out.signal = opts.signal;
  return out;
}

export async function waitForTurn(
  ticket: BudgetTicket,
  opts: CallOptions,
  info: RequestInfo,
): Promise<void> {
  let unsubscribe = (): void => {};
  const { onQueued } = opts;
  if (onQueued) {
    // Position 0 can still mean a wait (next in line, the window is full): report that too.
    const position = ticket.position();
    const expectedWaitMs = ticket.expectedWaitMs();
    if (position > 0 || expectedWaitMs > 0) onQueued({ position, expectedWaitMs });
    unsubscribe = ticket.onChange(onQueued);
  }
  try {
    await ticket.ready;
  } catch (err) {
    if (err instanceof BudgetCanceled) throw new CanceledError("canceled while queued", info);
    throw err;
  } finally {
    unsubscribe();
  }
}

/**
 * A 429 puts the caller back in line for `waitMs`: it is told so, like a wait in the budget,
 * so that a reply can show "queued" instead of a start that seems stuck.
 */
export function reportQueued(opts: CallOptions, waitMs: number): void {
  try {
    opts.onQueued?.({ position: 0, expectedWaitMs: waitMs });
  } catch {
    // An observer's failure must not change the outcome of the request.
  }
}
