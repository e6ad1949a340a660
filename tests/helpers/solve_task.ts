// `deno task solve` in a child process, as a user runs it: to completion, or stopped by Ctrl-C
// (or a scheduler's SIGTERM).

/** What a finished solve task printed and its exit code. */
export interface TaskRun {
  code: number;
  stdout: string;
  stderr: string;
}

function command(args: string[]): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "tasks/solve.ts", ...args],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  });
}

/** Runs the solve task with `args` to its end. */
export async function runSolveTask(args: string[]): Promise<TaskRun> {
  const out = await command(args).output();
  const td = new TextDecoder();
  return { code: out.code, stdout: td.decode(out.stdout), stderr: td.decode(out.stderr) };
}

/** Runs the solve task with `args` and sends `signal` once its first progress line is out. */
export async function interruptSolveTask(
  args: string[],
  signal: Deno.Signal = "SIGINT",
): Promise<TaskRun> {
  const child = command(args).spawn();
  const reader = child.stderr.getReader();
  const td = new TextDecoder();
  let err = "";
  let signalled = false;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    err += td.decode(value, { stream: true });
    if (!signalled && /solve: it \d+/.test(err)) child.kill(signal), signalled = true;
  }
  const [status, stdout] = await Promise.all([child.status, new Response(child.stdout).text()]);
  return { code: status.code, stdout, stderr: err };
}
