/** A small turn spot (narrow ranges, minimal bet sizes) for tests that need a real postflop tree. */
export const SMALL_TURN_SPOT = `
[ranges]
oop = "QQ+,AK,T9s"
ip = "JJ-99,AQs,KQ"
[cards]
flop = "Td9d6h"
turn = "Qc"
[tree]
starting_pot = 200
effective_stack = 900
[bet_sizes]
turn = "minimal"
river = "minimal"
`;
