/**
 * A downloaded file's bytes as text, when they are text: UTF-8 (a byte order mark dropped),
 * or, failing that, Windows-1252, which decodes any byte. Bytes holding a NUL in their first
 * 8 KiB are a binary whatever the file claims to be, and are not passed on.
 */
export function decodeText(bytes: Uint8Array): string | undefined {
  if (bytes.subarray(0, 8_192).includes(0)) return undefined;
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return new TextDecoder("windows-1252").decode(bytes);
  }
}
