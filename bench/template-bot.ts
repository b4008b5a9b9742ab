/**
 * What Slack's own agent template does (slack-samples/bolt-js-assistant-template), written
 * here for the bench to run side by side with the bot on the same fakes: on a mention it sets
 * the thread's status, streams the model's answer into `client.chatStream` (which sends
 * `chat.startStream`, then `chat.appendStream` each time 256 characters have gathered) and
 * stops the stream with a feedback block. The model is the service's OpenAI-style chat
 * completions endpoint. No rate limits are planned: the Web API client retries 429s as
 * Slack's answers ask. Not part of the product.
 *
 * Run by bench/bot-process.ts with the bot's own variables (SLACK_BOT_TOKEN,
 * SLACK_SIGNING_SECRET, SLACK_API_URL, ASSISTANT_API_URL, ASSISTANT_API_TOKEN, ASSISTANT_ID);
 * it listens on PORT and says so in the line the bench waits for.
 */
import type { AddressInfo } from "node:net";
import { App, LogLevel } from "@slack/bolt";
import { createParser } from "eventsource-parser";

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

const FEEDBACK = {
  type: "context_actions",
  elements: [
    {
      type: "feedback_buttons",
      action_id: "feedback",
      positive_button: { text: { type: "plain_text", text: "Good" }, value: "good" },
      negative_button: { text: { type: "plain_text", text: "Bad" }, value: "bad" },
    },
  ],
};

const app = new App({
  token: env("SLACK_BOT_TOKEN"),
  signingSecret: env("SLACK_SIGNING_SECRET"),
  clientOptions: { slackApiUrl: env("SLACK_API_URL") },
  logLevel: LogLevel.ERROR,
  customRoutes: [
    { path: "/readyz", method: ["GET"], handler: (_, res) => void res.end("ok") },
    { path: "/metrics", method: ["GET"], handler: (_, res) => void res.end("") },
  ],
});

/** The model's answer to `question`, piece by piece, as the chat completions stream writes it. */
async function* answer(question: string): AsyncGenerator<string> {
  const response = await fetch(`${env("ASSISTANT_API_URL")}/v1/agents/chat/completions`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${env("ASSISTANT_API_TOKEN")}`,
      "content-type": "application/json",
    },
    body: JSON.stringify({
      assistantId: env("ASSISTANT_ID"),
      stream: true,
      messages: [{ role: "user", content: question }],
    }),
  });
  if (!response.ok || !response.body) throw new Error(`the model answered ${response.status}`);
  const pieces: string[] = [];
  const parser = createParser({
    onEvent: ({ data }) => {
      if (data === "[DONE]") return;
      const content = JSON.parse(data).choices?.[0]?.delta?.content;
      if (typeof content === "string" && content !== "") pieces.push(content);
    },
  });
  const decoder = new TextDecoder();
  for await (const bytes of response.body) {
    parser.feed(decoder.decode(bytes, { stream: true }));
    yield* pieces.splice(0);
  }
}

app.event("app_mention", async ({ event, client, say }) => {
  const threadTs = event.thread_ts ?? event.ts;
  try {
    await client.assistant.threads.setStatus({
      channel_id: event.channel,
      thread_ts: threadTs,
      status: "thinking...",
    });
    const streamer = client.chatStream({
      channel: event.channel,
      thread_ts: threadTs,
      ...(event.team ? { recipient_team_id: event.team } : {}),
      ...(event.user ? { recipient_user_id: event.user } : {}),
    });
    for await (const piece of answer(event.text)) await streamer.append({ markdown_text: piece });
    await streamer.stop({ blocks: [FEEDBACK as never] });
  } catch (error) {
    await say({ text: `:warning: Something went wrong! (${error})`, thread_ts: threadTs });
  }
});

const server = (await app.start(Number(process.env.PORT ?? 0))) as {
  address(): AddressInfo | string | null;
};
const address = server.address();
const port = typeof address === "object" && address ? address.port : undefined;
process.stdout.write(`${JSON.stringify({ msg: "assistant bridge started", port })}\n`);
process.once("SIGTERM", () => void app.stop().finally(() => process.exit(0)));
