import type { z } from "zod";
import { ProtocolError, type RequestInfo } from "../errors.js";

/** Reading a response body within a size limit, and what it says (JSON, a zod shape). */

export async function readText(
  body: AsyncIterable<Uint8Array> & { destroy?: () => unknown },
  limit: number,
  info: RequestInfo,
): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > limit) {
      body.destroy?.();
      throw new ProtocolError(`the response body is larger than ${limit} bytes`, info);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

export function parseJsonOr(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Parses a success body with a zod schema; a wrong shape is the service's protocol error. */
export function parseBody<T>(schema: z.ZodType<T>, body: unknown, info: RequestInfo): T {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue?.path.length ? ` at ${issue.path.join(".")}` : "";
  throw new ProtocolError(
    `unexpected response shape${where}: ${issue?.message ?? "invalid"}`,
    info,
  );
}
