import type { ExpressionBuilder, Kysely, QueryCreator } from "kysely";
import { toConversation } from "../rows.js";
import type { AssistantPick, Conversation, ConversationKey, ConversationStore } from "../stores.js";
import type { Schema } from "./schema.js";

const COLUMNS = [
  "id",
  "team",
  "channel",
  "thread_ts",
  "assistant_id",
  "service_thread_id",
  "service_thread_owner",
  "passed_through_ts",
] as const;

/** The conversations in SQL (SQLite or PostgreSQL): one per Slack thread (its unique key). */
export class SqlConversationStore implements ConversationStore {
  constructor(
    private readonly db: Kysely<Schema>,
    private readonly now: () => number = Date.now,
  ) {}

  async find(key: ConversationKey): Promise<Conversation | undefined> {
    const row = await this.db
      .selectFrom("conversations")
      .select(COLUMNS)
      .where("team", "=", key.team)
      .where("channel", "=", key.channel)
      .where("thread_ts", "=", key.threadTs)
      .executeTakeFirst();
    return row && toConversation(row);
  }

  async byId(id: number): Promise<Conversation | undefined> {
    const row = await conversationByIdQuery(this.db, id).executeTakeFirst();
    return row && toConversation(row);
  }

  async byServiceThread(serviceThreadId: string): Promise<Conversation | undefined> {
    const row = await this.db
      .selectFrom("conversations")
      .select(COLUMNS)
      .where("service_thread_id", "=", serviceThreadId)
      .limit(1)
      .executeTakeFirst();
    return row && toConversation(row);
  }

  /**
   * The thread's conversation, made if new: one statement (`conversationUpsert`), whether this
   * call made it or another (a replica recording the same thread at the same moment) did.
   */
  async ensure(key: ConversationKey, assistant: string | AssistantPick): Promise<Conversation> {
    const upsert = conversationUpsert(this.db, key, assistant, this.now());
    return toConversation(await upsert.executeTakeFirstOrThrow());
  }

  /** Set once: the write holds only while no service thread is set (a second keeps the first). */
  async setServiceThread(
    id: number,
    serviceThreadId: string,
    owner: string | null,
  ): Promise<Conversation | undefined> {
    const set = await this.db
      .updateTable("conversations")
      .set({ service_thread_id: serviceThreadId, service_thread_owner: owner })
      .where("id", "=", id)
      .where("service_thread_id", "is", null)
      .returning(COLUMNS)
      .executeTakeFirst();
    return set ? toConversation(set) : this.byId(id);
  }

  async setPassedThrough(id: number, ts: string): Promise<void> {
    await this.db
      .updateTable("conversations")
      .set({ passed_through_ts: ts })
      .where("id", "=", id)
      .execute();
  }
}

/**
 * The insert of a thread's conversation that returns its row, new or not: on the thread's
 * unique key it updates nothing (sets a column to its own value), so that the row already
 * there, whoever recorded it, is returned by the same statement. A pick's choice is read by the
 * insert itself. Built over `db` or a WITH's query creator (turns.ts `record`).
 */
export function conversationUpsert(
  db: QueryCreator<Schema>,
  key: ConversationKey,
  assistant: string | AssistantPick,
  now: number,
) {
  return db
    .insertInto("conversations")
    .values((eb) => ({
      team: key.team,
      channel: key.channel,
      thread_ts: key.threadTs,
      assistant_id: typeof assistant === "string" ? assistant : picked(eb, key.team, assistant),
      created_at: now,
    }))
    .onConflict((conflict) =>
      conflict
        .columns(["team", "channel", "thread_ts"])
        .doUpdateSet((eb) => ({ team: eb.ref("excluded.team") })),
    )
    .returning(COLUMNS);
}

/** The choice for the pick's place in this workspace if it is listed, else the pick's default. */
function picked(eb: ExpressionBuilder<Schema, "conversations">, team: string, pick: AssistantPick) {
  const chosen = eb
    .selectFrom("assistant_choices")
    .select("assistant_id")
    .where("team", "=", team)
    .where("scope", "=", pick.place.scope)
    .where("key", "=", pick.place.key)
    .where("assistant_id", "in", pick.listed);
  return eb.fn.coalesce(chosen, eb.val(pick.otherwise));
}

/** The statement that reads the conversation `id`. */
export function conversationByIdQuery(db: QueryCreator<Schema>, id: number) {
  return db.selectFrom("conversations").select(COLUMNS).where("id", "=", id);
}
