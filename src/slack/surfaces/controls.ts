import type { Bridge } from "../../bridge/bridge.js";
import { parseCommand, usageLines } from "../../controls/command-table.js";
import type { Logger } from "../../logger.js";
import type { RunSettings } from "../../service/schemas.js";
import type { SettingsStore } from "../../store/stores.js";
import { settleWithin } from "../../time.js";
import { type Gatekeeping, REFUSAL_NOTES } from "../admission/admission.js";
import type { BoltApp } from "../installations/app.js";
import { STOP_ACTION_ID } from "../render/reply-blocks.js";
import type { SlackWebApi } from "../web-api/web-api.js";
import { type PeopleControlDeps, peopleCommand, peopleStatus } from "./people-controls.js";

export interface ControlDeps extends Gatekeeping {
  bridge: Bridge;
  settings: SettingsStore;
  logger: Logger;
  /** Links to replies for `status` (best effort). */
  /** The Web API of a workspace. */
  slack: (team: string) => Pick<SlackWebApi, "getPermalink">;
  /** `link`, `unlink`, `use` and their part of `status`; without it they are not offered. */
  people?: PeopleControlDeps;
}

/** Told when the service did not take a stop even after retrying. */
export const STOP_FAILED =
  ":warning: The assistant service did not take the stop, so the answer goes on. Please try again in a moment.";

/** Describes the settings in force, for help and status. */
export function describeSettings(settings: RunSettings): string {
  const model = settings.modelOverride ?? "default";
  const effort = settings.reasoning_effort ?? "default";
  const steps = settings.maxSteps === undefined ? "default" : String(settings.maxSteps);
  return `model *${model}*, effort *${effort}*, steps *${steps}*`;
}

function usage(settings: RunSettings, problem?: string): string {
  return [
    ...(problem ? [`:warning: ${problem}`, ""] : []),
    "*Talk to the assistant:* mention me in a channel, or send me a direct message. I answer in the thread; reply there to continue.",
    "",
    "*Commands*",
    ...usageLines(),
    "",
    `Your settings in this channel: ${describeSettings(settings)}.`,
  ].join("\n");
}

/**
 * `/assistant` and the Stop button. Every answer is ephemeral and acknowledged at once. A
 * person who may not use the bot gets the same note as for a message, and nothing changes.
 */
export function registerControls(app: BoltApp, deps: ControlDeps): void {
  app.command("/assistant", async ({ command, ack, respond, context }) => {
    const reply = (text: string) => ack({ response_type: "ephemeral", text });
    const team = await deps.installation.workspace(context);
    const refusal = await deps.admission(team).check({
      user: command.user_id,
      team: command.team_id,
      enterprise: command.enterprise_id,
    });
    if (refusal !== undefined) {
      await reply(REFUSAL_NOTES[refusal]);
      return;
    }
    const key = { team, channel: command.channel_id, user: command.user_id };
    const current = await deps.settings.get(key);
    const parsed = parseCommand(command.text ?? "");
    if (!parsed.ok) {
      await reply(usage(current, parsed.problem));
      return;
    }
    const cmd = parsed.command;
    switch (cmd.name) {
      case "link":
      case "unlink":
      case "use": {
        if (deps.people === undefined) {
          await reply(usage(current, "That command is not available here."));
          return;
        }
        const place = { ...key, triggerId: command.trigger_id };
        const text = await peopleCommand(cmd, place, deps.people);
        await (text === undefined ? ack() : reply(text));
        return;
      }
      case "help":
        await reply(usage(current));
        return;
      case "set": {
        const next = await deps.settings.update(key, cmd.change);
        const what = { model: "Model", effort: "Reasoning effort", steps: "Step limit" }[
          cmd.setting
        ];
        const said = cmd.value === "default" ? "back to the default" : `set to *${cmd.value}*`;
        await reply(
          `${what} ${said} for your next questions in this channel. Now: ${describeSettings(next)}.`,
        );
        return;
      }
      case "stop": {
        const mine = await deps.bridge.activeFor(key.team, key.channel, key.user);
        if (mine.length === 0) {
          await reply("Nothing of yours is being answered in this channel right now.");
          return;
        }
        await reply(
          `Stopping ${mine.length === 1 ? "your answer" : `your ${mine.length} answers`} in this channel…`,
        );
        // Not awaited: the acknowledgement goes out now; the replies show the stops.
        void deps.bridge
          .stopAllFor(key.team, key.channel, key.user)
          .then(({ failed }) => {
            if (failed.length === 0) return;
            deps.logger.warn({ failed: failed.length }, "the service did not take some stops");
            return respond({ response_type: "ephemeral", text: STOP_FAILED });
          })
          .catch((error: unknown) => {
            deps.logger.warn({ err: String(error) }, "stop command failed");
            return respond({ response_type: "ephemeral", text: STOP_FAILED });
          })
          .catch((error: unknown) => {
            deps.logger.warn({ err: String(error) }, "could not say that stopping failed");
          });
        return;
      }
      case "status": {
        const mine = await deps.bridge.activeFor(key.team, key.channel, key.user);
        const lines = [`Your settings in this channel: ${describeSettings(current)}.`];
        if (deps.people) lines.push(...(await peopleStatus(key, deps.people)));
        if (mine.length === 0) lines.push("You have no answers in progress here.");
        else {
          lines.push(`Your answers in progress here (${mine.length}):`);
          // A turn whose placeholder could not be posted has no reply: link its question instead.
          const lookup = await settleWithin(
            Promise.all(
              mine.map(({ turn }) =>
                deps.slack(key.team).getPermalink({
                  channel: key.channel,
                  message_ts: turn.replyParts[0] ?? turn.messageTs,
                }),
              ),
            ),
            1_500,
          );
          const links = lookup.state === "fulfilled" ? lookup.value : undefined;
          mine.forEach(({ turn, running }, i) => {
            const state = running
              ? turn.runId
                ? "being written"
                : "waiting to start"
              : "queued behind an earlier question";
            const label = turn.replyParts[0] ? "reply" : "question";
            const link = links?.[i];
            lines.push(`• ${link ? `<${link}|${label}>` : label}: ${state}`);
          });
        }
        await reply(lines.join("\n"));
        return;
      }
    }
  });

  app.action(STOP_ACTION_ID, async ({ ack, body, action, context }) => {
    await ack();
    const turnId = (action as { value?: unknown }).value;
    const user = body.user.id;
    const channel = (body as { channel?: { id?: string } }).channel?.id;
    if (typeof turnId !== "string") return;
    const payload = body as {
      team?: { id?: string; enterprise_id?: string } | null;
      user: { team_id?: string };
    };
    // The stop may wait for the service; the press is acknowledged without waiting for it.
    void (async () => {
      const team = await deps.installation.workspace(context);
      const refusal = await deps.admission(team).check({
        user,
        team: payload.user.team_id ?? payload.team?.id,
        enterprise: payload.team?.enterprise_id,
      });
      if (refusal !== undefined) {
        if (channel) deps.notes.tell({ team, channel, user, text: REFUSAL_NOTES[refusal] });
        return;
      }
      // The action's own channel: a turn of another channel is not stopped from here.
      const result = await deps.bridge.stop(turnId, user, { team, channel });
      if (result === "stopped" || !channel) return;
      const owner = await deps.bridge.ownerOf(turnId);
      const text =
        result === "not_owner"
          ? `Only ${owner ? `<@${owner}>` : "the person who asked"} can stop this answer.`
          : result === "failed"
            ? STOP_FAILED
            : "This answer has already finished.";
      deps.notes.tell({ team, channel, user, text });
    })().catch((error: unknown) => {
      deps.logger.warn({ err: String(error) }, "stop button: could not stop or say why");
    });
  });
}
