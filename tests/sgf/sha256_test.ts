// The dependency-free SHA-256 behind game ids against FIPS 180-4 vectors and node:crypto.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { sha256Hex } from "../../src/sgf/sha256.ts";
import { xorshift32 } from "../helpers/prng.ts";

Deno.test("sha256: published vectors", () => {
  assert.equal(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  assert.equal(
    sha256Hex("abc"),
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
  );
  assert.equal(
    sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
  );
});

Deno.test("sha256: equals node:crypto on strings of every length around the block edges", () => {
  const rand = xorshift32(3);
  for (let n = 0; n < 300; n++) {
    let s = "";
    for (let i = 0; i < n; i++) {
      // Mostly ASCII, some multi-byte characters (game names and moves are UTF-8).
      const r = rand();
      s += r < 0.9 ? String.fromCharCode(32 + Math.floor(rand() * 95)) : r < 0.95 ? "é" : "♛";
    }
    assert.equal(sha256Hex(s), createHash("sha256").update(s).digest("hex"), `length ${n}`);
  }
});
