import assert from "node:assert/strict";
import { cardName, COMBO_CARDS, parseCards } from "../../src/poker/cards.ts";
import { evaluateCards } from "../../src/poker/hand_eval.ts";
import { chanceIsomorphism, swapPermutation, swapSuit } from "../../src/poker/isomorphism.ts";
import { parseRange, rangeHands } from "../../src/poker/range.ts";
import { buildTree, CfrSolver, findNode } from "../../src/cfr/mod.ts";
import { buildActionTree, type TreeConfig } from "../../src/poker/action_tree.ts";
import { parseBetSizes } from "../../src/poker/bet_size.ts";
import { PostflopGame } from "../../src/poker/game.ts";
import { gameSize } from "../../src/poker/memory.ts";

const SYM = parseRange("22+,A2s+,K9o+,QTs+,T9s,65s");
const both = [SYM, SYM] as const;

Deno.test("isomorphism: two-tone flop merges the two absent suits", () => {
  const iso = chanceIsomorphism(parseCards("Qs Jh 2h"), both);
  assert.equal(iso.outcomes, 49 - 13);
  assert.equal(cardName(iso.representative[parseCards("7d")[0]]), "7c");
  assert.equal(iso.representative[parseCards("7h")[0]], parseCards("7h")[0]);
});

Deno.test("isomorphism: three-suited boards merge nothing on the turn", () => {
  const iso = chanceIsomorphism(parseCards("Qs Jh 2d"), both);
  assert.equal(iso.outcomes, 49);
  assert.ok(iso.swapWith.every((s) => s === -1));
  // River of a three-suited turn board: still four different suit patterns.
  assert.equal(chanceIsomorphism(parseCards("Qs Jh 2d 5c"), both).outcomes, 48);
});

Deno.test("isomorphism: a swap must fix every earlier board of the path, not just the last", () => {
  // Flop Qs Jh 2h, turn Qc: clubs and spades now hold the same ranks, but the flop strategies
  // were shaped on a board where they differ, so the river may not merge them.
  const dealt = parseCards("Qs Jh 2h Qc");
  assert.equal(chanceIsomorphism(dealt, both, 3).outcomes, 48);
  // Starting on that turn board, the same exchange is a symmetry of the whole history.
  assert.equal(chanceIsomorphism(dealt, both, 4).outcomes, 48 - 12);
  // Flop Qs Jh 2h, turn 5h: clubs and diamonds are still interchangeable on the river.
  assert.equal(chanceIsomorphism(parseCards("Qs Jh 2h 5h"), both, 3).outcomes, 48 - 13);
});

Deno.test("isomorphism: monotone and rainbow boards, and asymmetric ranges", () => {
  // Monotone: clubs, diamonds and hearts are interchangeable: 13 + 10 outcomes.
  assert.equal(chanceIsomorphism(parseCards("As Ks Qs"), both).outcomes, 10 + 13);
  // Same ranks in two suits: spades merge into hearts, diamonds into clubs.
  assert.equal(chanceIsomorphism(parseCards("Qs Js Qh Jh"), both).outcomes, 13 + 11);
  // A range naming hearts breaks the hearts swap.
  const asym = [parseRange("AhKh,QQ"), SYM] as const;
  assert.equal(chanceIsomorphism(parseCards("As Ks Qs"), asym).outcomes, 13 + 13 + 10);
});

Deno.test("isomorphism: the swap maps hands to hands with equal weight and equal strength", () => {
  const flop = parseCards("Qs Jh 2h");
  const iso = chanceIsomorphism(flop, both);
  const hands = rangeHands(SYM, flop);
  const perm = swapPermutation(hands, 0, 1);
  for (let h = 0; h < hands.length; h++) {
    assert.ok(perm[h] >= 0);
    assert.equal(perm[perm[h]], h);
    assert.equal(SYM[hands[perm[h]]], SYM[hands[h]]);
  }
  // Dealing 7d then 3c equals dealing 7c then 3d for every hand swapped: same showdown strength.
  for (let c = 0; c < 52; c++) {
    if (iso.swapWith[c] < 0) continue;
    const twin = iso.representative[c];
    const river = parseCards("3c")[0];
    const boardA = [...flop, c, river], boardB = [...flop, twin, swapSuit(river, 0, 1)];
    for (let h = 0; h < hands.length; h += 7) {
      const a = evaluateCards([...boardA, ...cardsOf(hands[h])]);
      const b = evaluateCards([...boardB, ...cardsOf(hands[perm[h]])]);
      if (!cardsOf(hands[h]).some((x) => boardA.includes(x))) assert.equal(a, b);
    }
  }
});

function cardsOf(combo: number): number[] {
  return [COMBO_CARDS[2 * combo], COMBO_CARDS[2 * combo + 1]];
}

function turnSpot(board: string, isomorphism: boolean) {
  const s = parseBetSizes("66%", "a");
  const cfg: TreeConfig = {
    startingStreet: (parseCards(board).length - 3) as 0 | 1,
    startingPot: 100,
    effectiveStack: 300,
    rakeRate: 0,
    rakeCap: 0,
    betSizes: [[s, s], [s, s], [s, s]],
    donkSizes: [null, null],
    addAllinThreshold: 0,
    forceAllinThreshold: 0,
    mergingThreshold: 0,
  };
  const game = new PostflopGame(
    buildActionTree(cfg),
    parseCards(board),
    [parseRange("AA,KK,QQ,AK,T9s,76s"), parseRange("JJ-99,AQ,KQs,98s")],
    { isomorphism },
  );
  return { game, tree: buildTree(game) };
}

Deno.test("isomorphism: isomorphic and full solves of the same spot agree", () => {
  // Two-suited turn: clubs and diamonds are interchangeable on the river (35 outcomes, not 48).
  const iso = turnSpot("Qs Js 7h 2h", true), full = turnSpot("Qs Js 7h 2h", false);
  const chance = (t: typeof iso) => Array.from(t.tree.kind).filter((k) => k === 1).length;
  const [ad, ac, ah] = parseCards("Ad Ac Ah");
  assert.equal(iso.game.dealtAs(iso.game.board, ad), ac);
  assert.equal(iso.game.dealtAs(iso.game.board, ah), ah);
  assert.equal(full.game.dealtAs(full.game.board, ad), ad);
  assert.equal(chance(iso), chance(full));
  assert.ok(iso.tree.size < full.tree.size * 0.8, `${iso.tree.size} vs ${full.tree.size}`);
  const a = new CfrSolver(iso.tree, iso.game, { seed: 1 });
  const b = new CfrSolver(full.tree, full.game, { seed: 1 });
  // Early iterations agree to float rounding (CFR's dynamics later amplify the last bits, so the
  // long-run check is on exploitability and values instead).
  a.run(10);
  b.run(10);
  for (
    const path of [[], ["Check"], ["Bet 66"], ["Check", "Check", "Ac"], ["Check", "Check", "Ah"]]
  ) {
    const sa = a.averageStrategy(findNode(iso.tree, path));
    const sb = b.averageStrategy(findNode(full.tree, path));
    sa.forEach((x, i) => assert.ok(Math.abs(x - sb[i]) < 1e-4, `${path} ${i}: ${x} ${sb[i]}`));
  }
  a.run(140);
  b.run(140);
  const ea = a.exploitability(), eb = b.exploitability();
  assert.ok(ea.percent < 0.5 && eb.percent < 0.5, `${ea.percent} vs ${eb.percent}`);
  assert.ok(Math.abs(ea.ev[0] - eb.ev[0]) < 0.05, `${ea.ev} vs ${eb.ev}`);
});

Deno.test("isomorphism: the memory estimate counts the merged tree exactly", () => {
  for (const board of ["Qs Js 7h 2h", "Qs Jh 2h"]) {
    const { game, tree } = turnSpot(board, true);
    const size = gameSize(game.tree, game.board.length, game.numHands, game.streetMultipliers());
    let elements = 0;
    for (let b = 0; b < tree.blockSize.length; b++) elements += tree.blockSize[b];
    assert.equal(size.publicNodes, tree.size, board);
    assert.equal(size.decisionNodes, tree.blockNode.length, board);
    assert.equal(size.elements, elements, board);
  }
});
