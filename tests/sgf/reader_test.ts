import { deepEqual, ok, throws } from "node:assert/strict";
import { parseSgf, SgfSyntaxError, sgfValue } from "../../src/sgf/reader.ts";

function syntaxError(text: string): SgfSyntaxError {
  try {
    parseSgf(text, "t.sgf");
  } catch (e) {
    if (e instanceof SgfSyntaxError) return e;
    throw e;
  }
  throw new Error(`no error for ${JSON.stringify(text)}`);
}

Deno.test("reader: collection of trees with variations and multi-valued properties", () => {
  const trees = parseSgf("(;FF[4]GM[1]AB[aa][bb] [cc];B[dd](;W[ee])(;W[ff];B[gg]))\n(;GM[27])");
  deepEqual(trees.length, 2);
  const [t] = trees;
  deepEqual(t.nodes.length, 2);
  deepEqual(t.nodes[0].properties.map((p) => p.id), ["FF", "GM", "AB"]);
  deepEqual(t.nodes[0].properties[2].values, ["aa", "bb", "cc"]);
  deepEqual(t.variations.length, 2);
  deepEqual(sgfValue(t.variations[1].nodes[1], "B"), "gg");
  deepEqual(sgfValue(trees[1].nodes[0], "GM"), "27");
});

Deno.test("reader: escapes, soft line breaks, CRLF and a byte-order mark", () => {
  const text = "\uFEFF(;C[a\\]b\\\\c\\d]\r\nGC[line1\r\nline2]N[soft\\\r\nbreak]TX[\\\\wS1])";
  const [t] = parseSgf(text);
  const node = t.nodes[0];
  deepEqual(sgfValue(node, "C"), "a]b\\cd");
  deepEqual(sgfValue(node, "GC"), "line1\nline2");
  deepEqual(sgfValue(node, "N"), "softbreak");
  deepEqual(sgfValue(node, "TX"), "\\wS1");
  deepEqual(node.properties[1].line, 2);
  deepEqual(node.properties[1].column, 1);
});

Deno.test("reader: boardspace identifiers P0, P1, P-1 and escaped brackets inside values", () => {
  const [t] = parseSgf(
    '(;P0[id "a"]\n; P-1[Pop P0\\[0 Start P0\\]]\n; P1[3 dropb bQ M 12 \\\\wS1])',
  );
  deepEqual(t.nodes.length, 3);
  deepEqual(t.nodes[1].properties[0].id, "P-1");
  deepEqual(sgfValue(t.nodes[1], "P-1"), "Pop P0[0 Start P0]");
  deepEqual(sgfValue(t.nodes[2], "P1"), "3 dropb bQ M 12 \\wS1");
  deepEqual([t.nodes[2].line, t.nodes[2].column], [3, 1]);
});

Deno.test("reader: empty input and whitespace only give no trees", () => {
  deepEqual(parseSgf(""), []);
  deepEqual(parseSgf(" \r\n\t"), []);
});

Deno.test("reader: errors carry line and column", () => {
  let e = syntaxError("(;GM[27]\n;B[aa]");
  deepEqual(e.code, "sgf_truncated");
  deepEqual([e.line, e.column], [2, 7]);
  ok(e.message.startsWith("t.sgf:2:7: "), e.message);

  e = syntaxError("(;GM[27]\n  ;C[open");
  deepEqual(e.code, "sgf_truncated");
  ok(e.message.includes("opened at 2:5"), e.message);

  e = syntaxError("(;GM[27]\n;B aa])");
  deepEqual(e.code, "sgf_syntax");
  deepEqual([e.line, e.column], [2, 4]);

  e = syntaxError("()");
  deepEqual([e.code, e.line, e.column], ["sgf_syntax", 1, 2]);

  e = syntaxError("junk(;GM[1])");
  deepEqual([e.code, e.line, e.column], ["sgf_syntax", 1, 1]);

  e = syntaxError("(;GM[1])\r\n\r\nx");
  deepEqual([e.line, e.column], [3, 1]);

  e = syntaxError("(;GM[1]B[aa]*)");
  deepEqual([e.code, e.line, e.column], ["sgf_syntax", 1, 13]);

  e = syntaxError("(;C[x\\");
  deepEqual(e.code, "sgf_truncated");
});

Deno.test("reader: every real record parses, one file holds two records", () => {
  const dir = new URL("../fixtures/sgf/records/", import.meta.url);
  let files = 0;
  for (const e of Deno.readDirSync(dir)) {
    const trees = parseSgf(Deno.readTextFileSync(new URL(e.name, dir)), e.name);
    deepEqual(trees.length, e.name.startsWith("HV-aaronheit") ? 2 : 1, e.name);
    deepEqual(sgfValue(trees[0].nodes[0], "GM"), "27");
    files++;
  }
  deepEqual(files, 9);
  throws(() => parseSgf("(;GM[27]", "x.sgf"), SgfSyntaxError);
});
