import { randomUUID } from "node:crypto";
import type { Immediate } from "../immediate.js";
import type { TurnStore } from "../stores.js";
import { applyTurnEvent, type NewTurn, receivedTurn, type Turn, type TurnEvent } from "../turn.js";
import { TurnEvents } from "../turn-events.js";
import { CHANGEABLE, type TurnRow as Row, toChange, toNewRow, toTurn } from "../turn-rows.js";
import { type Db, truncateWal } from "./db.js";

/** The turns in SQLite; every transition is checked by the state machine, then written whole. */
export class SqliteTurnStore extends TurnEvents implements Immediate<TurnStore> {
  private readonly insertStmt;
  private readonly writeStmt;
  private readonly byIdStmt;
  private readonly byMessageStmt;
  private readonly unfinishedStmt;
  private readonly unfinishedInStmt;
  private readonly unfinishedInAnyStmt;
  private readonly activeByUserStmt;
  private readonly countByUserStmt;
  private readonly messageIdsStmt;
  private readonly askedInStmt;
  private readonly purgeStmt;

  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {
    super();
    this.insertStmt = db.prepare(
      `INSERT INTO turns (id, conversation_id, team, channel, thread_ts, message_ts, user,
         author_team, content, notes, state, created_at, updated_at)
       VALUES (@id, @conversation_id, @team, @channel, @thread_ts, @message_ts, @user,
         @author_team, @content, @notes, 'received', @created_at, @created_at)
       ON CONFLICT (team, channel, message_ts) DO NOTHING`,
    );
    this.writeStmt = db.prepare(
      `UPDATE turns SET ${CHANGEABLE.map((c) => `${c} = @${c}`).join(", ")}, updated_at = @now
       WHERE id = @id AND state = @from`,
    );
    this.byIdStmt = db.prepare<[string], Row>("SELECT * FROM turns WHERE id = ?");
    this.byMessageStmt = db.prepare<[string, string, string], Row>(
      "SELECT * FROM turns WHERE team = ? AND channel = ? AND message_ts = ?",
    );
    this.unfinishedStmt = db.prepare<[], Row>(
      "SELECT * FROM turns WHERE state <> 'finished' ORDER BY created_at, rowid",
    );
    this.unfinishedInStmt = db.prepare<[number], Row>(
      `SELECT * FROM turns WHERE conversation_id = ? AND state <> 'finished'
       ORDER BY created_at, rowid`,
    );
    this.unfinishedInAnyStmt = db.prepare<[string], Row>(
      `SELECT * FROM turns WHERE conversation_id IN (SELECT value FROM json_each(?))
       AND state <> 'finished' ORDER BY conversation_id, created_at, rowid`,
    );
    this.messageIdsStmt = db.prepare<[number], { id: string }>(
      `SELECT service_message_id AS id FROM turns
       WHERE conversation_id = ? AND service_message_id IS NOT NULL`,
    );
    this.askedInStmt = db.prepare<[string, string], { id: number }>(
      "SELECT DISTINCT conversation_id AS id FROM turns WHERE team = ? AND user = ?",
    );
    // Named: turns_by_asker matches (team, user) as well, and holds every turn ever asked.
    this.countByUserStmt = db.prepare<[string, string], { n: number }>(
      `SELECT COUNT(*) AS n FROM turns INDEXED BY turns_unfinished_by_person
       WHERE team = ? AND user = ? AND state <> 'finished'`,
    );
    this.activeByUserStmt = db.prepare<[string, string, string], Row>(
      `SELECT * FROM turns WHERE team = ? AND channel = ? AND user = ? AND state <> 'finished'
       ORDER BY created_at, rowid`,
    );
    // A finished turn is never written again (every event is illegal there), so a purge is
    // final; `updated_at` is when it finished.
    this.purgeStmt = db.prepare(
      `UPDATE turns SET content = '', service_content = NULL, notes = '[]', error = NULL,
         texts_purged_at = @now
       WHERE rowid IN (SELECT rowid FROM turns
         WHERE state = 'finished' AND texts_purged_at IS NULL AND updated_at < @before
         ORDER BY updated_at LIMIT @limit)`,
    );
  }

  create(input: NewTurn): Turn | undefined {
    const turn = receivedTurn(input, randomUUID(), this.now());
    const result = this.insertStmt.run(toNewRow(turn));
    // The turn as inserted, not read back: a failure after the insert would otherwise refuse
    // Slack's event (listeners.ts) for a turn that is recorded, and its retry would be a duplicate.
    return result.changes === 1 ? turn : undefined;
  }

  byId(id: string): Turn | undefined {
    const row = this.byIdStmt.get(id);
    return row && toTurn(row);
  }

  byMessage(team: string, channel: string, messageTs: string): Turn | undefined {
    const row = this.byMessageStmt.get(team, channel, messageTs);
    return row && toTurn(row);
  }

  unfinished(): Turn[] {
    return this.unfinishedStmt.all().map(toTurn);
  }

  unfinishedIn(conversationId: number): Turn[] {
    return this.unfinishedInStmt.all(conversationId).map(toTurn);
  }

  unfinishedInAny(conversationIds: readonly number[]): Turn[] {
    if (conversationIds.length === 0) return [];
    return this.unfinishedInAnyStmt.all(JSON.stringify(conversationIds)).map(toTurn);
  }

  activeFor(team: string, channel: string, user: string): Turn[] {
    return this.activeByUserStmt.all(team, channel, user).map(toTurn);
  }

  serviceMessageIds(conversationId: number): Set<string> {
    return new Set(this.messageIdsStmt.all(conversationId).map((r) => r.id));
  }

  conversationsAskedIn(team: string, user: string): number[] {
    return this.askedInStmt.all(team, user).map((r) => r.id);
  }

  unfinishedCountBy(team: string, user: string): number {
    return this.countByUserStmt.get(team, user)?.n ?? 0;
  }

  requestStop(id: string, user: string): boolean {
    const sql = `UPDATE turns SET stop_requested_by = COALESCE(stop_requested_by, ?)
                 WHERE id = ? AND state <> 'finished'`;
    return this.db.prepare(sql).run(user, id).changes > 0;
  }

  purgeTexts(finishedBefore: number, limit: number): number {
    const purged = this.purgeStmt.run({ before: finishedBefore, limit, now: this.now() }).changes;
    // The file overwrites what the UPDATE freed (secure_delete); the -wal still holds the
    // pages as they were before it until emptied.
    if (purged > 0) truncateWal(this.db);
    return purged;
  }

  protected apply(id: string, event: TurnEvent): Turn {
    return this.db.transaction(() => {
      const current = this.byId(id);
      if (!current) throw new Error(`turn ${id} does not exist`);
      const next = applyTurnEvent(current, event);
      this.writeStmt.run({ ...toChange(next), id, from: current.state, now: this.now() });
      return next;
    })();
  }
}
