import { page } from "./paging.js";
import { owned, type Route, type RouteDeps } from "./routes.js";
import { CreateThreadBody, PostMessageBody, parseBody } from "./validation.js";
import { HttpError } from "./wire.js";

/** Threads and messages: interface §4 POST /v1/thread, messages, GET /v1/threads. */
export function threadRoutes({ state }: RouteDeps): Route[] {
  const ownThread = (id: string, token: string) => owned("thread", id, state.thread(id, token));

  return [
    {
      method: "POST",
      pattern: "/v1/thread",
      kind: "request",
      body: "json",
      handle: ({ token, body }) => {
        const { assistantId, title } = parseBody(CreateThreadBody, body);
        return { status: 201, body: state.createThread(token, assistantId, title) };
      },
    },
    {
      method: "POST",
      pattern: "/v1/thread/:id/messages",
      kind: "request",
      body: "json",
      handle: ({ token, id, body }) => {
        const thread = ownThread(id, token);
        const { content } = parseBody(PostMessageBody, body);
        return { status: 201, body: state.addMessage(thread.id, content) };
      },
    },
    {
      method: "GET",
      pattern: "/v1/thread/:id/messages",
      kind: "request",
      body: "ignore",
      handle: ({ token, id, query }) => {
        const thread = ownThread(id, token);
        return { status: 200, body: page(state.messages(thread.id), query) };
      },
    },
    {
      method: "GET",
      pattern: "/v1/threads",
      kind: "request",
      body: "ignore",
      handle: ({ token, query }) => {
        const assistantId = query.assistantId;
        if (assistantId === "") throw new HttpError(400, "assistantId must not be empty");
        const threads = state
          .threads(token)
          .filter((thread) => assistantId === undefined || thread.assistantId === assistantId);
        return { status: 200, body: page(threads, query) };
      },
    },
  ];
}
