// `deno task solve` in a child process, as a user runs it: to completion, or stopped by Ctrl-C
// (or a scheduler's SIGTERM) once its first progress line is out.
import { interruptTask, runTask, type TaskRun } from "./task_process.ts";

export type { TaskRun };

/** Runs the solve task with `args` to its end. */
export function runSolveTask(args: string[]): Promise<TaskRun> {
  return runTask("tasks/solve.ts", args);
}

/** Runs the solve task with `args` and sends `signal` once its first progress line is out. */
export function interruptSolveTask(
  args: string[],
  signal: Deno.Signal = "SIGINT",
): Promise<TaskRun> {
  return interruptTask("tasks/solve.ts", args, /solve: it \d+/, signal);
}
