/**
 * The environment variable `name`, or undefined where it is unset or cannot be read (no Deno, as
 * in a browser bundle, or no permission to read the environment).
 */
export function envValue(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}
