/**
 * Runs `f` with the environment variables named set (null: unset), then restores what they were,
 * whatever `f` does.
 */
export async function withEnv<T>(
  vars: Record<string, string | null>,
  f: () => Promise<T> | T,
): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, Deno.env.get(k)]));
  for (const [k, v] of Object.entries(vars)) v === null ? Deno.env.delete(k) : Deno.env.set(k, v);
  try {
    return await f();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      v === undefined ? Deno.env.delete(k) : Deno.env.set(k, v);
    }
  }
}
