/**
 * A Slack event that carried a question the bot could not record (the database refused the
 * write: disk full, an I/O error). It must not be acknowledged, so that Slack delivers it
 * again: HTTP mode answers 5xx, Socket Mode withholds the ack (app.ts). The retry is
 * answered once, like any retry, when the record can be made.
 */
export class EventNotRecorded extends Error {
  /** Bolt hands an error that has a `code` to the error handler as it is (asCodedError). */
  readonly code = "slack_bridge_event_not_recorded";

  constructor(cause: unknown) {
    super("a Slack event could not be recorded; Slack will deliver it again", { cause });
    this.name = "EventNotRecorded";
  }
}

/** Whether a listener's error (as Bolt passes it on, maybe wrapped) is an EventNotRecorded. */
export function isEventNotRecorded(error: unknown): boolean {
  const original = (error as { original?: unknown } | null | undefined)?.original;
  return error instanceof EventNotRecorded || original instanceof EventNotRecorded;
}
