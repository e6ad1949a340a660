// The UHP engine loop over byte streams: reads command lines, writes replies, never dies on input.
import type { UhpEngine } from "./engine.ts";

/** Longest command line accepted; longer ones are answered with an error and skipped. */
export const MAX_LINE = 1 << 16;

/**
 * Runs `engine` over `input` until end of input or `exit`, writing `info` first and one reply per
 * command. Bytes are decoded leniently (bad UTF-8 becomes U+FFFD); `\r\n` and `\n` both end lines.
 */
export async function runUhpLoop(
  engine: UhpEngine,
  input: ReadableStream<Uint8Array>,
  write: (text: string) => Promise<void>,
): Promise<void> {
  await write(engine.info() + "\n");
  const decoder = new TextDecoder("utf-8", { fatal: false });
  let pending = "";
  let overflow = false;
  const handleLine = async (raw: string): Promise<boolean> => {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.trim().toLowerCase() === "exit") return false;
    if (line.trim() === "") return true;
    await write(engine.handle(line) + "\n");
    return true;
  };
  for await (const chunk of input) {
    pending += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = pending.indexOf("\n")) >= 0) {
      const raw = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      if (overflow) {
        overflow = false;
        continue;
      }
      if (!(await handleLine(raw))) return;
    }
    if (pending.length > MAX_LINE) {
      pending = "";
      if (!overflow) await write(`err Line longer than ${MAX_LINE} characters ignored.\nok\n`);
      overflow = true;
    }
  }
  pending += decoder.decode();
  if (!overflow && pending !== "") await handleLine(pending);
}
