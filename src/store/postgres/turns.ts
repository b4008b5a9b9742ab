import { randomUUID } from "node:crypto";
import type { Immediate } from "../immediate.js";
import type { TurnStore } from "../stores.js";
import {
  applyTurnEvent,
  IllegalTransition,
  type NewTurn,
  receivedTurn,
  type Turn,
  type TurnEvent,
} from "../turn.js";
import { TurnEvents } from "../turn-events.js";
import { CHANGEABLE, NEW_COLUMNS, type TurnRow, toChange, toNewRow, toTurn } from "../turn-rows.js";
import type { SyncPostgres } from "./sync-client.js";
import { type TurnVersion, TurnVersions } from "./turn-versions.js";

/** The new turn's columns as $1…$n, then its `updated_at` (its `created_at`) as $n+1. */
const INSERT = `INSERT INTO turns (${NEW_COLUMNS.map((c) => (c === "user" ? '"user"' : c)).join(", ")},
    state, updated_at)
  VALUES (${NEW_COLUMNS.map((_, i) => `$${i + 1}`).join(", ")}, 'received', $${NEW_COLUMNS.length + 1})
  ON CONFLICT (team, channel, message_ts) DO NOTHING`;

/** $1 the id, $2 the state it is in, $3 the time, then the changeable columns in order. */
const WRITE = `UPDATE turns SET ${CHANGEABLE.map((c, i) => `${c} = $${i + 5}`).join(", ")},
  updated_at = $3 WHERE id = $1 AND state = $2 AND updated_at = $4
  RETURNING stop_requested_by`;

/** Arrival order: SQLite's rowid is `seq` here. */
const ARRIVAL = "ORDER BY created_at, seq";

/**
 * The turns in PostgreSQL; every transition is checked by the state machine, then written
 * whole, only if nobody wrote the turn since it was read (`apply`).
 */
export class PostgresTurnStore extends TurnEvents implements Immediate<TurnStore> {
  private readonly versions = new TurnVersions();

  constructor(
    private readonly db: SyncPostgres,
    private readonly now: () => number = Date.now,
  ) {
    super();
  }

  create(input: NewTurn): Turn | undefined {
    const turn = receivedTurn(input, randomUUID(), this.now());
    const row = toNewRow(turn);
    const inserted = this.db.run(INSERT, [...NEW_COLUMNS.map((c) => row[c]), turn.createdAt]);
    // The turn as inserted, not read back (as in SQLite): undefined when another delivery of
    // this Slack message, maybe seen by another replica, recorded it first.
    if (inserted !== 1) return undefined;
    this.versions.keep({ turn, updatedAt: turn.createdAt });
    return turn;
  }

  byId(id: string): Turn | undefined {
    return this.one("SELECT * FROM turns WHERE id = $1", [id]);
  }

  byMessage(team: string, channel: string, messageTs: string): Turn | undefined {
    return this.one("SELECT * FROM turns WHERE team = $1 AND channel = $2 AND message_ts = $3", [
      team,
      channel,
      messageTs,
    ]);
  }

  unfinished(): Turn[] {
    return this.many(`SELECT * FROM turns WHERE state <> 'finished' ${ARRIVAL}`);
  }

  unfinishedIn(conversationId: number): Turn[] {
    return this.many(
      `SELECT * FROM turns WHERE conversation_id = $1 AND state <> 'finished' ${ARRIVAL}`,
      [conversationId],
    );
  }

  unfinishedInAny(conversationIds: readonly number[]): Turn[] {
    if (conversationIds.length === 0) return [];
    return this.many(
      `SELECT * FROM turns WHERE conversation_id = ANY($1::bigint[]) AND state <> 'finished'
       ORDER BY conversation_id, created_at, seq`,
      [[...conversationIds]],
    );
  }

  activeFor(team: string, channel: string, user: string): Turn[] {
    return this.many(
      `SELECT * FROM turns WHERE team = $1 AND channel = $2 AND "user" = $3
       AND state <> 'finished' ${ARRIVAL}`,
      [team, channel, user],
    );
  }

  unfinishedCountBy(team: string, user: string): number {
    return (
      this.db.first<{ n: number }>(
        `SELECT COUNT(*) AS n FROM turns WHERE team = $1 AND "user" = $2 AND state <> 'finished'`,
        [team, user],
      )?.n ?? 0
    );
  }

  conversationsAskedIn(team: string, user: string): number[] {
    return this.db
      .rows<{ id: number }>(
        `SELECT DISTINCT conversation_id AS id FROM turns WHERE team = $1 AND "user" = $2
         ORDER BY conversation_id`,
        [team, user],
      )
      .map((r) => r.id);
  }

  serviceMessageIds(conversationId: number): Set<string> {
    const rows = this.db.rows<{ id: string }>(
      `SELECT service_message_id AS id FROM turns
       WHERE conversation_id = $1 AND service_message_id IS NOT NULL`,
      [conversationId],
    );
    return new Set(rows.map((r) => r.id));
  }

  requestStop(id: string, user: string): boolean {
    const sql = `UPDATE turns SET stop_requested_by = COALESCE(stop_requested_by, $1)
                 WHERE id = $2 AND state <> 'finished'`;
    return this.db.run(sql, [user, id]) > 0;
  }

  purgeTexts(finishedBefore: number, limit: number): number {
    // A finished turn is never written again, so a purge is final; `updated_at` is when it
    // finished. The condition stands again outside the subquery so that a turn purged by
    // another replica at the same moment is not counted twice.
    return this.db.run(
      `UPDATE turns SET content = '', service_content = NULL, notes = '[]', error = NULL,
         texts_purged_at = $3
       WHERE texts_purged_at IS NULL AND id IN (SELECT id FROM turns
         WHERE state = 'finished' AND texts_purged_at IS NULL AND updated_at < $1
         ORDER BY updated_at LIMIT $2)`,
      [finishedBefore, limit, this.now()],
    );
  }

  /**
   * A write that takes effect only if the row is still the version it was computed from (its
   * state and `updated_at`, which every write moves forward), with no transaction. The version
   * is the one this process last wrote (turn-versions.ts): one round trip. Without one, or
   * when the row has moved on since, the row is read first: two. A turn is written by the
   * replica that holds its conversation; should another one have written it in between (a
   * lease lost in a stall), the write is refused like any transition the state no longer
   * allows, never reported as done.
   */
  protected apply(id: string, event: TurnEvent): Turn {
    const known = this.versions.get(id);
    if (known) {
      const written = this.writeKnown(known, event);
      if (written) return written;
      this.versions.forget(id);
    }
    const row = this.db.first<TurnRow & { updated_at: number }>(
      "SELECT * FROM turns WHERE id = $1",
      [id],
    );
    if (!row) throw new Error(`turn ${id} does not exist`);
    const current = { turn: toTurn(row), updatedAt: row.updated_at };
    const written = this.write(current, event);
    if (!written) throw new IllegalTransition(id, current.turn.state, event.type);
    return written;
  }

  /** As write, from the version kept; undefined too when that version does not allow `event`. */
  private writeKnown(known: TurnVersion, event: TurnEvent): Turn | undefined {
    try {
      return this.write(known, event);
    } catch (error) {
      // The row may have moved on to a state that does allow it: read, and decide from that.
      if (error instanceof IllegalTransition) return undefined;
      throw error;
    }
  }

  /**
   * The turn after `event`, written if the row is still `current`; undefined if it is not.
   * A stop asked from another replica is not a version of its own (requestStop): it is read
   * back with the write.
   */
  private write(current: TurnVersion, event: TurnEvent): Turn | undefined {
    const next = applyTurnEvent(current.turn, event);
    const change = toChange(next);
    const updatedAt = Math.max(this.now(), current.updatedAt + 1);
    const row = this.db.first<{ stop_requested_by: string | null }>(WRITE, [
      current.turn.id,
      current.turn.state,
      updatedAt,
      current.updatedAt,
      ...CHANGEABLE.map((c) => change[c]),
    ]);
    if (!row) return undefined;
    const written = { ...next, stopRequestedBy: row.stop_requested_by };
    this.versions.keep({ turn: written, updatedAt });
    return written;
  }

  private one(sql: string, params: unknown[]): Turn | undefined {
    const row = this.db.first<TurnRow>(sql, params);
    return row && toTurn(row);
  }

  private many(sql: string, params: unknown[] = []): Turn[] {
    return this.db.rows<TurnRow>(sql, params).map(toTurn);
  }
}
