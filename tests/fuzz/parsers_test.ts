// Property-based fuzzing (fast-check, fixed seed and case counts) of the text parsers that take
// user input: ranges, bet sizes, solve configs (TOML), SGF. Every case ends in a result or a
// KibitzError, never another exception (a crash) or a stack overflow.
import fc from "fast-check";
import { ok } from "node:assert/strict";
import { stringify as toToml } from "smol-toml";
import { parse as parseToml } from "smol-toml";
import { betSizeToString, parseBetSizeList } from "../../src/poker/bet_size.ts";
import { EXAMPLE_CONFIG, parseSolveConfig } from "../../src/poker/config.ts";
import { parseRange } from "../../src/poker/range.ts";
import { ingestRecordFile } from "../../src/sgf/ingest.ts";
import { parseSgf } from "../../src/sgf/reader.ts";
import { FUZZ_SEED, settle } from "./settle.ts";

const chars = (alphabet: string, maxLength = 40) =>
  fc.string({ unit: fc.constantFrom(...alphabet), maxLength });

// ---- ranges ------------------------------------------------------------------------------------

const RANKS = "AKQJT98765432";
const rank = fc.constantFrom(...RANKS);
const suit = fc.constantFrom(..."shdc");
const handClass = fc.tuple(rank, rank, fc.constantFrom("", "s", "o")).map(([a, b, s]) => a + b + s);
const exact = fc.tuple(rank, suit, rank, suit).map((x) => x.join(""));
const rangeEntry = fc.tuple(
  fc.oneof(
    handClass,
    exact,
    handClass.map((h) => h + "+"),
    exact.map((h) => h + "+"),
    fc.tuple(handClass, handClass).map(([a, b]) => `${a}-${b}`),
    fc.tuple(exact, exact).map(([a, b]) => `${a}-${b}`),
    chars("AKQT92shdco+-: ."),
  ),
  fc.option(
    fc.oneof(fc.double({ min: -1, max: 2, noNaN: true }).map(String), chars("0123456789.-e")),
    { nil: undefined },
  ),
).map(([body, w]) => (w === undefined ? body : `${body}:${w}`));
const rangeText = fc.oneof(
  fc.array(rangeEntry, { maxLength: 8 }).map((a) => a.join(",")),
  fc.string({ maxLength: 60 }),
);

Deno.test("fuzz: ranges parse to weights in [0, 1] or a bad_range error", () => {
  let parsed = 0;
  fc.assert(
    fc.property(rangeText, (text) => {
      const r = settle(() => parseRange(text, "ranges.oop"));
      if (!r.ok) {
        ok(r.error.code === "bad_range" && r.error.message.startsWith("ranges.oop: "));
        return;
      }
      parsed++;
      ok(r.value.length === 1326 && r.value.every((w) => w >= 0 && w <= 1));
    }),
    { seed: FUZZ_SEED, numRuns: 1500 },
  );
  ok(parsed > 100, `only ${parsed} generated ranges were valid: the generator is too wild`);
});

// ---- bet sizes ---------------------------------------------------------------------------------

const sizeEntry = fc.oneof(
  fc.tuple(fc.double({ min: 0, max: 500, noNaN: true }), fc.constantFrom("%", "x", "c", "e%")).map((
    [v, k],
  ) => (k === "e%" ? `2e${+v.toFixed(2)}%` : `${+v.toFixed(3)}${k}`)),
  fc.tuple(fc.nat(300), fc.nat(120)).map(([c, r]) => `${c}c${r}r`),
  fc.constantFrom("a", "e", "2e", "3e200%", "2.5x", "A", "E", "100C"),
  chars("0123456789.%xXcCrReEaA -+"),
);
const sizeList = fc.oneof(
  fc.array(sizeEntry, { maxLength: 6 }).map((a) => a.join(", ")),
  fc.string({ maxLength: 30 }),
);

Deno.test("fuzz: bet-size lists parse (and print back parseable) or give bad_bet_size", () => {
  let parsed = 0;
  fc.assert(
    fc.property(sizeList, fc.boolean(), (text, isRaise) => {
      const r = settle(() => parseBetSizeList(text, isRaise, "bet_sizes.flop.oop_bet"));
      if (!r.ok) {
        ok(r.error.code === "bad_bet_size", r.error.code);
        return;
      }
      parsed++;
      const again = parseBetSizeList(r.value.map(betSizeToString).join(","), isRaise, "again");
      ok(again.length === r.value.length && again.every((s, i) => s.kind === r.value[i].kind));
    }),
    { seed: FUZZ_SEED, numRuns: 1500 },
  );
  ok(parsed > 100, `only ${parsed} valid size lists`);
});

// ---- solve configs (TOML) ----------------------------------------------------------------------

const base = parseToml(EXAMPLE_CONFIG) as Record<string, Record<string, unknown>>;
const paths: [string, string][] = Object.entries(base).flatMap(([s, t]) =>
  Object.keys(t).map((k) => [s, k] as [string, string])
);
const tomlValue = fc.oneof(
  fc.integer(),
  fc.constantFrom(0, -1, 1e308, -1e308, 2 ** 31, 2 ** 53, Infinity, -Infinity, NaN, 0.5),
  fc.double(),
  fc.boolean(),
  fc.string({ maxLength: 20 }),
  fc.constantFrom("QQ+,AKs", "Qs Jh 2h", "Tc", "dcfr", "16bit", "cpu", "minimal", "50%, e", ""),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.constantFrom("oop_bet", "ip_raise", "x"), fc.string({ maxLength: 8 }), {
    maxKeys: 2,
  }),
);
const edit = fc.oneof(
  fc.tuple(fc.constantFrom(...paths), tomlValue).map(([p, v]) => ({ kind: "set", p, v })),
  fc.constantFrom(...paths).map((p) => ({ kind: "drop", p, v: null })),
  fc.tuple(fc.constantFrom(...Object.keys(base), "extra"), fc.string({ maxLength: 8 }), tomlValue)
    .map(([s, k, v]) => ({ kind: "set", p: [s, k] as [string, string], v })),
);
const configText = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.array(edit, { maxLength: 4 }).map((edits) => {
      const cfg = structuredClone(base);
      for (const e of edits) {
        const [s, k] = e.p;
        const t = (cfg[s] ??= {});
        if (e.kind === "drop") delete t[k];
        else t[k] = e.v;
      }
      try {
        return toToml(cfg);
      } catch {
        return EXAMPLE_CONFIG; // a value TOML cannot write (e.g. undefined)
      }
    }),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.nat(EXAMPLE_CONFIG.length), fc.string({ maxLength: 12 })).map((
      [at, s],
    ) => EXAMPLE_CONFIG.slice(0, at) + s + EXAMPLE_CONFIG.slice(at)),
  },
);

Deno.test("fuzz: solve configs validate or give an error naming the file", () => {
  let valid = 0;
  fc.assert(
    fc.property(configText, (text) => {
      const r = settle(() => parseSolveConfig(text, "fuzz.toml"));
      if (!r.ok) {
        ok(r.error.message.startsWith("fuzz.toml: "), r.error.message);
        return;
      }
      valid++;
      const t = r.value.tree;
      ok(t.startingPot > 0 && t.startingPot + 2 * t.effectiveStack <= 2 ** 31 - 1);
    }),
    { seed: FUZZ_SEED, numRuns: 400 },
  );
  ok(valid > 20, `only ${valid} valid configs`);
});

// ---- SGF -----------------------------------------------------------------------------------------

const action = fc.oneof(
  fc.constantFrom(
    "1 pick W 4 wS1",
    "1 dropb wQ N 13 .",
    "2 move B bS1 L 11 /bL",
    "3 done",
    "4 resign",
    "5 pass",
    "6 dropb bA1 M 12 wQ\\\\",
    "7 pmove W wG1 N 14 -wQ",
  ),
  fc.tuple(
    fc.nat(200),
    fc.constantFrom("pick", "move", "dropb", "done", "xx"),
    chars("WBwbQAGSMLP123 NMOL0123456789/\\-."),
  )
    .map(([n, v, rest]) => `${n} ${v} ${rest}`),
  chars("[]\\;()ab \n", 12),
);
const prop = fc.oneof(
  fc.constantFrom(
    "GM[27]",
    "SU[hive]",
    "SU[hive-plm]",
    "SU[hive-ultimate]",
    "RE[white wins]",
    "GN[x]",
    "DT[2020.01.02]",
    'P0[id "a"]',
    'P1[id "b"]',
  ),
  fc.tuple(fc.constantFrom("P0", "P1"), action).map(([p, a]) =>
    `${p}[${a.replace(/[\]\\]/g, "\\$&")}]`
  ),
  fc.tuple(chars("ABCPMGSUREa0-1", 3), chars("abc[]\\ 1", 10)).map(([id, v]) => `${id}[${v}]`),
);
const node = fc.array(prop, { maxLength: 4 }).map((ps) => `;${ps.join("")}`);
const nodes = fc.array(node, { minLength: 1, maxLength: 6 }).map((ns) => ns.join("\n"));
/** Game trees with variations nested up to `depth` levels. */
function treeOf(depth: number): fc.Arbitrary<string> {
  if (depth === 0) return nodes.map((ns) => `(${ns})`);
  return fc.tuple(nodes, fc.array(treeOf(depth - 1), { maxLength: 2 }))
    .map(([ns, vs]) => `(${ns}${vs.join("")})`);
}
const tree = treeOf(3);
const sgfText = fc.oneof(
  { weight: 5, arbitrary: fc.array(tree, { minLength: 1, maxLength: 2 }).map((t) => t.join("\n")) },
  { weight: 2, arbitrary: chars("();[]\\GMSUP01 \n\r", 80) },
  {
    weight: 1,
    arbitrary: fc.oneof(fc.nat(3000), fc.constantFrom(50_000, 200_000)).map((d) =>
      "(;GM[27]".repeat(d) + ")".repeat(d)
    ),
  },
);

Deno.test("fuzz: SGF texts parse or give a syntax error; ingest never crashes on a record", () => {
  fc.assert(
    fc.property(sgfText, (text) => {
      const r = settle(() => parseSgf(text, "fuzz.sgf"));
      if (!r.ok) {
        ok(["sgf_syntax", "sgf_truncated", "too_deep"].includes(r.error.code), r.error.code);
        ok(r.error.message.startsWith("fuzz.sgf:"), r.error.message);
      }
      const ingested = ingestRecordFile({ name: "fuzz.sgf", text });
      for (const x of ingested.rejections) {
        ok(x.reason !== "internal_error", `${x.message}\n${text}`);
      }
    }),
    { seed: FUZZ_SEED, numRuns: 600 },
  );
});
