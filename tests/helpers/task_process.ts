// A task (tasks/*.ts) in a child process, as a user runs it: to completion, or stopped by a signal
// (Ctrl-C's SIGINT, a job scheduler's SIGTERM) once it has printed a given line.

/** What a finished task printed and its exit code. */
export interface TaskRun {
  code: number;
  stdout: string;
  stderr: string;
}

function command(script: string, args: string[]): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", script, ...args],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  });
}

/** Runs `script` with `args` to its end. */
export async function runTask(script: string, args: string[]): Promise<TaskRun> {
  const out = await command(script, args).output();
  const td = new TextDecoder();
  return { code: out.code, stdout: td.decode(out.stdout), stderr: td.decode(out.stderr) };
}

/** Runs `script` with `args` and sends `signal` once its stderr matches `ready`. */
export async function interruptTask(
  script: string,
  args: string[],
  ready: RegExp,
  signal: Deno.Signal = "SIGINT",
): Promise<TaskRun> {
  const child = command(script, args).spawn();
  const reader = child.stderr.getReader();
  const td = new TextDecoder();
  let err = "";
  let signalled = false;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    err += td.decode(value, { stream: true });
    if (!signalled && ready.test(err)) child.kill(signal), signalled = true;
  }
  const [status, stdout] = await Promise.all([child.status, new Response(child.stdout).text()]);
  return { code: status.code, stdout, stderr: err };
}
