import { randomUUID } from "node:crypto";
import { type Insertable, type QueryCreator, type RawBuilder, sql } from "kysely";
import { toConversation, toSettings } from "../rows.js";
import type {
  Conversation,
  NewQuestion,
  RecordedQuestion,
  RunSettings,
  SettingsKey,
  TurnStore,
} from "../stores.js";
import {
  applyTurnEvent,
  IllegalTransition,
  receivedTurn,
  type Turn,
  type TurnEvent,
} from "../turn.js";
import { TurnEvents } from "../turn-events.js";
import { CHANGEABLE, type TurnRow, toChange, toNewRow, toTurn } from "../turn-rows.js";
import { type TurnVersion, TurnVersions } from "../turn-versions.js";
import { conversationUpsert } from "./conversations.js";
import type { SqlDatabase } from "./dialect.js";
import type { Schema, TurnsTable } from "./schema.js";
import { type FIELDS, settingsQuery } from "./settings.js";

/**
 * Written into the statement, not bound: the partial indexes hold only unfinished (or only
 * finished) turns, and a planner uses one only when it sees the query asks for those alone.
 */
const FINISHED = sql.lit("finished" as const);

/**
 * The turns in SQL (SQLite or PostgreSQL). Every transition is checked by the state machine,
 * then written whole, only if nobody wrote the turn since it was read (`apply`): a
 * compare-and-set on the row's state and `updated_at`, never a transaction held across an
 * await.
 */
export class SqlTurnStore extends TurnEvents implements TurnStore {
  private readonly versions = new TurnVersions();
  /**
   * The transition of each turn under way in this process, so the next one starts after it:
   * a turn's runner and its reply (which records its messages while the steps go on) write
   * the same row, and each write is computed from the version before it. Other replicas'
   * writes are what the compare-and-set is for.
   */
  private readonly writing = new Map<string, Promise<unknown>>();

  constructor(
    private readonly sqlDb: SqlDatabase,
    private readonly now: () => number = Date.now,
  ) {
    super();
  }

  private get db() {
    return this.sqlDb.db;
  }

  /** Where the statements an acknowledgement waits for run (SqlDatabase.acknowledging). */
  private get acknowledging() {
    return this.sqlDb.acknowledging ?? this.sqlDb.db;
  }

  /** Arrival order: created_at, then the dialect's arrival column. */
  private get arrival() {
    return sql.ref(this.sqlDb.arrival);
  }

  async record(question: NewQuestion): Promise<RecordedQuestion> {
    const { conversation: found, assistant, limit, lease, ...input } = question;
    const now = this.now();
    const id = randomUUID();
    const received = (conversationId: number) =>
      receivedTurn({ ...input, conversationId }, id, now);
    // Slack's acknowledgement waits for this record: on connections of its own.
    const on = this.acknowledging;
    const key = { team: input.team, channel: input.channel, threadTs: input.threadTs };
    const upsert = (db: QueryCreator<Schema>) => conversationUpsert(db, key, assistant, now);
    // The turn's insert and the lease's, as they would be on their own (typed without the
    // WITH's names), reading the conversation's id from `c` when it is made in the same write.
    const turnIn = (db: unknown, conversationId: number | RawBuilder<unknown>) =>
      this.insert(db as QueryCreator<Schema>, received(0), limit, conversationId);
    const leaseIn = (db: unknown, conversationId: number | RawBuilder<unknown>) =>
      leaseInsert(db as QueryCreator<Schema>, lease, conversationId, id, now, TAKEN_HERE);
    const leased = sql<boolean>`EXISTS (SELECT 1 FROM l)`.as("leased");
    // The asker's settings in the channel, for the run's start should the lease be taken.
    const asker = { team: input.team, channel: input.channel, user: input.user };
    if (this.sqlDb.writesInWith && !found) {
      // The conversation, the turn and the lease in one statement.
      const fromC = sql`(SELECT id FROM c)`;
      const row = await on
        .with("c", upsert)
        .with("t", (db) => turnIn(db, fromC))
        .with("l", (db) => leaseIn(db, fromC))
        .selectFrom("c")
        .selectAll()
        .select((eb) => [eb.selectFrom("t").select("state").as("recorded"), leased])
        .select(settingsColumns(on, asker))
        .executeTakeFirstOrThrow();
      const { recorded, leased: took, model_override, reasoning_effort, max_steps, ...rest } = row;
      const settings = took
        ? toSettings({ model_override, reasoning_effort, max_steps })
        : undefined;
      return this.recorded(toConversation(rest), received(row.id), recorded, settings);
    }
    if (this.sqlDb.writesInWith && found) {
      const row = await on
        .with("t", (db) => turnIn(db, found.id))
        .with("l", (db) => leaseIn(db, found.id))
        .selectNoFrom((eb) => [
          eb.selectFrom("t").select("state").as("recorded"),
          leased,
          ...settingsColumns(on, asker),
        ])
        .executeTakeFirstOrThrow();
      const settings = row.leased ? toSettings(row) : undefined;
      return this.recorded(found, received(found.id), row.recorded, settings);
    }
    // SQLite: one statement after the other, none waited for (its writes are synchronous).
    const conversation = found ?? toConversation(await upsert(on).executeTakeFirstOrThrow());
    const turn = received(conversation.id);
    const inserted = await this.insert(on, turn, limit, conversation.id).executeTakeFirst();
    const asked = inserted?.state === "received" && lease !== undefined;
    const took =
      asked &&
      (await leaseInsert(on, lease, conversation.id, id, now, sql<boolean>`TRUE`).execute())
        .length > 0;
    const settings = took
      ? toSettings(await settingsQuery(on, asker).executeTakeFirst())
      : undefined;
    return this.recorded(conversation, turn, inserted?.state ?? null, settings);
  }

  /**
   * The insert of a new turn, as `turn` says, in the conversation `conversationId` (its id, or
   * an expression of it). An asker with `limit` unfinished turns already is refused in the same
   * insert: the turn is recorded finished, without its text or files (RecordedQuestion). No row
   * is returned when the Slack message has a turn already; else its state.
   */
  private insert(
    db: QueryCreator<Schema>,
    turn: Turn,
    limit: number | undefined,
    conversationId: number | RawBuilder<unknown>,
  ) {
    const over =
      limit === undefined
        ? sql<boolean>`FALSE`
        : sql<boolean>`(${this.unfinishedCount(turn.team, turn.user)}) >= ${limit}`;
    const refused = sql`(SELECT refused FROM n)`;
    const row = toNewRow(turn);
    return db
      .with("n", (q) => q.selectNoFrom(over.as("refused")))
      .insertInto("turns")
      .values({
        ...row,
        conversation_id: conversationId,
        content: sql`CASE WHEN ${refused} THEN '' ELSE ${row.content} END`,
        files: sql`CASE WHEN ${refused} THEN '[]' ELSE ${row.files} END`,
        state: sql`CASE WHEN ${refused} THEN ${FINISHED} ELSE 'received' END`,
        outcome: sql`CASE WHEN ${refused} THEN 'error' END`,
        updated_at: turn.createdAt,
      } as Insertable<TurnsTable>)
      .onConflict((conflict) => conflict.columns(["team", "channel", "message_ts"]).doNothing())
      .returning("state");
  }

  /**
   * The turn as inserted, not read back (`state` null: another delivery of this Slack message,
   * a retry or another replica's, recorded it first). `settings`: read by a record that took
   * the lease (RecordedQuestion.settings), so undefined when it took none.
   */
  private recorded(
    conversation: Conversation,
    turn: Turn,
    state: string | null,
    settings: RunSettings | undefined,
  ): RecordedQuestion {
    const leased = settings !== undefined;
    if (state === null) return { conversation, turn: undefined, overLimit: false, leased: false };
    const overLimit = state === "finished";
    const kept: Turn = overLimit
      ? { ...turn, content: "", files: [], state: "finished", outcome: "error" }
      : turn;
    this.versions.keep({ turn: kept, updatedAt: kept.createdAt });
    return { conversation, turn: kept, overLimit, leased, ...(settings && { settings }) };
  }

  async byId(id: string): Promise<Turn | undefined> {
    const row = await this.db
      .selectFrom("turns")
      .selectAll()
      .where("id", "=", id)
      .executeTakeFirst();
    return row && toTurn(row as TurnRow);
  }

  async byMessage(team: string, channel: string, messageTs: string): Promise<Turn | undefined> {
    const row = await this.db
      .selectFrom("turns")
      .selectAll()
      .where("team", "=", team)
      .where("channel", "=", channel)
      .where("message_ts", "=", messageTs)
      .executeTakeFirst();
    return row && toTurn(row as TurnRow);
  }

  unfinished(): Promise<Turn[]> {
    return this.many(
      this.db
        .selectFrom("turns")
        .selectAll()
        .where("state", "<>", FINISHED)
        .orderBy("created_at")
        .orderBy(this.arrival),
    );
  }

  unfinishedIn(conversationId: number): Promise<Turn[]> {
    return this.many(unfinishedInQuery(this.sqlDb, conversationId));
  }

  async unfinishedInAny(conversationIds: readonly number[]): Promise<Turn[]> {
    if (conversationIds.length === 0) return [];
    return this.many(
      this.db
        .selectFrom("turns")
        .selectAll()
        .where("conversation_id", "in", [...conversationIds])
        .where("state", "<>", FINISHED)
        .orderBy("conversation_id")
        .orderBy("created_at")
        .orderBy(this.arrival),
    );
  }

  activeFor(team: string, channel: string, user: string): Promise<Turn[]> {
    return this.many(
      this.db
        .selectFrom("turns")
        .selectAll()
        .where("team", "=", team)
        .where("channel", "=", channel)
        .where("user", "=", user)
        .where("state", "<>", FINISHED)
        .orderBy("created_at")
        .orderBy(this.arrival),
    );
  }

  async unfinishedCountBy(team: string, user: string): Promise<number> {
    const { rows } = await this.unfinishedCount(team, user).execute(this.acknowledging);
    return Number(rows[0]?.n ?? 0);
  }

  /** SQL: the count `n` of a person's unfinished turns; only its table clause is the dialect's. */
  private unfinishedCount(team: string, user: string) {
    return sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM ${this.sqlDb.unfinishedByPerson}
      WHERE team = ${team} AND "user" = ${user} AND state <> ${FINISHED}`;
  }

  async conversationsAskedIn(team: string, user: string): Promise<number[]> {
    const rows = await this.db
      .selectFrom("turns")
      .select("conversation_id as id")
      .distinct()
      .where("team", "=", team)
      .where("user", "=", user)
      .orderBy("conversation_id")
      .execute();
    return rows.map((r) => r.id);
  }

  async serviceMessageIds(conversationId: number): Promise<Set<string>> {
    const rows = await this.db
      .selectFrom("turns")
      .select("service_message_id as id")
      .where("conversation_id", "=", conversationId)
      .where("service_message_id", "is not", null)
      .execute();
    return new Set(rows.map((r) => r.id as string));
  }

  async requestStop(id: string, user: string): Promise<boolean> {
    const result = await this.db
      .updateTable("turns")
      .set((eb) => ({ stop_requested_by: eb.fn.coalesce("stop_requested_by", eb.val(user)) }))
      .where("id", "=", id)
      .where("state", "<>", FINISHED)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /**
   * A finished turn is never written again (every event is illegal there), so a purge is
   * final; `updated_at` is when it finished. The condition stands again outside the subquery
   * so that a turn purged by another replica at the same moment is not counted twice.
   */
  async purgeTexts(finishedBefore: number, limit: number): Promise<number> {
    const due = this.db
      .selectFrom("turns")
      .select("id")
      .where("state", "=", FINISHED)
      .where("texts_purged_at", "is", null)
      .where("updated_at", "<", finishedBefore)
      .orderBy("updated_at")
      .limit(limit);
    const result = await this.db
      .updateTable("turns")
      .set({
        content: "",
        files: "[]",
        service_content: null,
        notes: "[]",
        error: null,
        texts_purged_at: this.now(),
      })
      .where("texts_purged_at", "is", null)
      .where("id", "in", due)
      .executeTakeFirst();
    const purged = Number(result.numUpdatedRows);
    if (purged > 0) await this.sqlDb.afterPurge();
    return purged;
  }

  /**
   * A write that takes effect only if the row is still the version it was computed from (its
   * state and `updated_at`, which every write moves forward). The version is the one this
   * process last wrote (turn-versions.ts): one round trip. Without one, or when the row has
   * moved on since, the row is read first: two. Should another writer have written the turn
   * in between (a replica whose lease lapsed in a stall, a stop), the write is refused like
   * any transition the state no longer allows, never reported as done.
   */
  protected apply(id: string, events: readonly TurnEvent[]): Promise<Turn> {
    const before = this.writing.get(id) ?? Promise.resolve();
    const next = before.then(
      () => this.applyNow(id, events),
      () => this.applyNow(id, events),
    );
    const settled = next.catch(() => undefined);
    this.writing.set(id, settled);
    void settled.then(() => {
      if (this.writing.get(id) === settled) this.writing.delete(id);
    });
    return next;
  }

  private async applyNow(id: string, events: readonly TurnEvent[]): Promise<Turn> {
    const known = this.versions.get(id);
    if (known) {
      const written = await this.writeKnown(known, events);
      if (written) return written;
      this.versions.forget(id);
    }
    const row = await this.db
      .selectFrom("turns")
      .selectAll()
      .where("id", "=", id)
      .executeTakeFirst();
    if (!row) throw new Error(`turn ${id} does not exist`);
    const current = { turn: toTurn(row as TurnRow), updatedAt: row.updated_at };
    const written = await this.write(current, events);
    const first = events[0] as TurnEvent;
    if (!written) throw new IllegalTransition(id, current.turn.state, first.type);
    return written;
  }

  /** As write, from the version kept; undefined too when that version does not allow `events`. */
  private async writeKnown(
    known: TurnVersion,
    events: readonly TurnEvent[],
  ): Promise<Turn | undefined> {
    try {
      return await this.write(known, events);
    } catch (error) {
      // The row may have moved on to a state that does allow it: read, and decide from that.
      if (error instanceof IllegalTransition) return undefined;
      throw error;
    }
  }

  /**
   * The turn after `events`, in order, written in one statement if the row is still `current`;
   * undefined if it is not. A stop asked through another replica is not a version of its own
   * (requestStop): it is read back with the write.
   */
  private async write(
    current: TurnVersion,
    events: readonly TurnEvent[],
  ): Promise<Turn | undefined> {
    const next = events.reduce(applyTurnEvent, current.turn);
    const change = toChange(next);
    const updatedAt = Math.max(this.now(), current.updatedAt + 1);
    const row = await this.db
      .updateTable("turns")
      .set({
        ...(Object.fromEntries(CHANGEABLE.map((c) => [c, change[c]])) as Partial<TurnsTable>),
        updated_at: updatedAt,
      })
      .where("id", "=", current.turn.id)
      .where("state", "=", current.turn.state)
      .where("updated_at", "=", current.updatedAt)
      .returning("stop_requested_by")
      .executeTakeFirst();
    if (!row) return undefined;
    const written = { ...next, stopRequestedBy: row.stop_requested_by };
    this.versions.keep({ turn: written, updatedAt });
    return written;
  }

  private async many(query: { execute(): Promise<unknown[]> }): Promise<Turn[]> {
    const rows = (await query.execute()) as TurnRow[];
    return rows.map(toTurn);
  }
}

/** The statement that reads a conversation's unfinished turns, in the order they arrived. */
export function unfinishedInQuery(sqlDb: SqlDatabase, conversationId: number) {
  return sqlDb.db
    .selectFrom("turns")
    .selectAll()
    .where("conversation_id", "=", conversationId)
    .where("state", "<>", FINISHED)
    .orderBy("created_at")
    .orderBy(sql.ref(sqlDb.arrival));
}

/** The asker's settings in the channel, as three columns of a record's statement (PostgreSQL). */
function settingsColumns(db: QueryCreator<Schema>, asker: SettingsKey) {
  const one = <T>(field: (typeof FIELDS)[number]) =>
    sql<T>`(${settingsQuery(db, asker).clearSelect().select(field)})`;
  return [
    one<string | null>("model_override").as("model_override"),
    one<string | null>("reasoning_effort").as("reasoning_effort"),
    one<number | null>("max_steps").as("max_steps"),
  ];
}

/** In a record's statement (PostgreSQL): the turn `t` was recorded to be answered. */
const TAKEN_HERE = sql<boolean>`EXISTS (SELECT 1 FROM t WHERE state = 'received')`;

/**
 * The insert of a record's lease (NewQuestion.lease) on the conversation `conversationId`,
 * made only when `recorded` holds and the conversation has no unfinished turn but the new one
 * `turnId` (on PostgreSQL the statement does not see its own insert, nor one not yet
 * committed). A lease row already there, whoever's and however old, is left for a claim to
 * decide; of two records at once in one conversation, one inserts the row. Returns the row's
 * conversation id when it was inserted; none when no lease was asked for.
 */
function leaseInsert(
  db: QueryCreator<Schema>,
  lease: NewQuestion["lease"],
  conversationId: number | RawBuilder<unknown>,
  turnId: string,
  now: number,
  recorded: RawBuilder<boolean>,
) {
  const asked = lease !== undefined;
  const others = db
    .selectFrom("turns")
    .select(sql.lit(1).as("one"))
    .where("conversation_id", "=", conversationId as number)
    .where("state", "<>", FINISHED)
    .where("id", "<>", turnId);
  return db
    .insertInto("conversation_leases")
    .columns(["conversation_id", "holder", "expires_at", "taken_from"])
    .expression(
      db
        .selectNoFrom([
          sql<number>`CAST(${conversationId} AS BIGINT)`.as("conversation_id"),
          sql<string>`CAST(${lease?.holder ?? ""} AS TEXT)`.as("holder"),
          sql<number>`CAST(${now + (lease?.ttlMs ?? 0)} AS BIGINT)`.as("expires_at"),
          sql<null>`NULL`.as("taken_from"),
        ])
        .where(sql<boolean>`${sql.lit(asked)}`)
        .where(recorded)
        .where(({ not, exists }) => not(exists(others))),
    )
    .onConflict((conflict) => conflict.column("conversation_id").doNothing())
    .returning("conversation_id");
}
