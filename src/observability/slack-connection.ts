import { SocketModeReceiver } from "@slack/bolt";
import type { BoltApp } from "../slack/installations/app.js";

/** Whether Slack can reach the bot, for `/readyz`. */
export interface SlackConnection {
  connected(): boolean;
  /** The app has started (HTTP mode: its server listens). */
  started(): void;
  /** The app is stopping or stopped. */
  stopped(): void;
}

/** Socket Mode client states after which no event can arrive until `connected` again. */
const DOWN_STATES = ["connecting", "reconnecting", "disconnecting", "disconnected", "close"];

/**
 * In HTTP mode Slack reaches the bot once its server listens. In Socket Mode only while the
 * websocket is up: the client reports `connected` on Slack's hello and `close` when the socket
 * drops (it then reconnects on its own). Bolt keeps its receiver in a private field, so it is
 * read here, in one place, without a type.
 */
export function watchSlackConnection(app: BoltApp): SlackConnection {
  let running = false;
  let socketUp: boolean | undefined;
  const receiver = (app as unknown as { receiver?: unknown }).receiver;
  if (receiver instanceof SocketModeReceiver) {
    socketUp = false;
    receiver.client.on("connected", () => {
      socketUp = true;
    });
    for (const state of DOWN_STATES) {
      receiver.client.on(state, () => {
        socketUp = false;
      });
    }
  }
  return {
    connected: () => running && socketUp !== false,
    started: () => {
      running = true;
    },
    stopped: () => {
      running = false;
    },
  };
}
