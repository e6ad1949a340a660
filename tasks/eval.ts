import { parseTaskArgs } from "../src/cli/args.ts";
import { KibitzError } from "../src/errors.ts";
import { runMain } from "../src/cli/main.ts";
import { Progress } from "../src/cli/progress.ts";
import { parseCards } from "../src/poker/cards.ts";
import { enumerateSevenCardCategories } from "../src/poker/eval_enum.ts";
import { CATEGORY_NAMES, categoryOf, evaluateCards } from "../src/poker/hand_eval.ts";

// Published counts of all 133,784,560 seven-card hands (../shared/data/poker/REFERENCE.md).
const EXPECTED = [
  23294460,
  58627800,
  31433400,
  6461620,
  6180020,
  4047644,
  3473184,
  224848,
  41584,
];

await runMain(() => {
  const args = parseTaskArgs(
    Deno.args,
    "deno task eval [CARDS] [--json]",
    "Enumerates all 133,784,560 seven-card hands through the evaluator tables and checks the\n" +
      'category counts against the published figures; with CARDS (5 to 7, e.g. "As Ks Qs Js Ts")\n' +
      "prints that hand's strength (1..7462) and category instead.",
    { json: { type: "boolean", help: "print JSON on stdout" } },
  );
  if (!args) return;
  if (args.positionals.length > 0) {
    const text = args.positionals.join(" ");
    const cards = parseCards(text, "CARDS");
    if (cards.length < 5 || cards.length > 7) {
      throw new KibitzError("bad_args", `CARDS "${text}": give 5 to 7 cards, got ${cards.length}`);
    }
    const s = evaluateCards(cards);
    const category = CATEGORY_NAMES[categoryOf(s)];
    console.log(args.values.json ? JSON.stringify({ strength: s, category }) : `${s} ${category}`);
    return;
  }
  const progress = new Progress("eval");
  const counts = enumerateSevenCardCategories((done, total) =>
    progress.update(`${((100 * done) / total).toFixed(1)}% of ${total} hands`)
  );
  const seconds = progress.elapsed();
  progress.done("done");
  const total = counts.reduce((a, b) => a + b, 0);
  const ok = EXPECTED.every((e, i) => counts[i] === e);
  if (args.values.json) {
    console.log(JSON.stringify({
      hands: total,
      seconds,
      handsPerSecond: total / seconds,
      categories: Object.fromEntries(CATEGORY_NAMES.map((n, i) => [n, counts[i]])),
      matchesReference: ok,
    }));
  } else {
    for (let i = 8; i >= 0; i--) {
      const mark = counts[i] === EXPECTED[i] ? "ok" : `MISMATCH (expected ${EXPECTED[i]})`;
      console.log(`${CATEGORY_NAMES[i].padEnd(16)} ${String(counts[i]).padStart(10)}  ${mark}`);
    }
    console.log(
      `${total} hands in ${seconds.toFixed(2)} s (${(total / seconds / 1e6).toFixed(1)} M hands/s)`,
    );
  }
  if (!ok) Deno.exit(1);
});
