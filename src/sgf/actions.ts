import type { SgfTree } from "./reader.ts";

/** One numbered player action of a boardspace record, such as `P0[12 dropb wQ O 13 wS1-]`. */
export interface BoardspaceAction {
  /** 0 for P0, 1 for P1. */
  player: 0 | 1;
  /** The verb in lower case (`dropb`, `movedone`, ...). */
  verb: string;
  /** The words after the verb. */
  args: string[];
  /** The property value as written (escapes resolved), for error messages. */
  raw: string;
  line: number;
  column: number;
}

/** Player descriptions found in `P0[...]`/`P1[...]` values that are not numbered actions. */
export interface BoardspacePlayers {
  names: [string, string];
}

const ACTION = /^\s*(\d+)\s+(\S+)\s*(.*)$/s;
const POP = /^\s*pop\s+P([01])\[(.*)\]\s*$/is;
const ID = /^\s*id\s+"(.*)"\s*$/s;

/** The main line of a game tree: its nodes, then the first variation's, recursively. */
export function mainLine(tree: SgfTree): SgfTree["nodes"] {
  const nodes = [...tree.nodes];
  let t = tree;
  while (t.variations.length) {
    t = t.variations[0];
    nodes.push(...t.nodes);
  }
  return nodes;
}

/**
 * Extracts the numbered player actions of a boardspace record in order, and the player names
 * (`P0[id "name"]`). A spectator/system `P-1[Pop P0[...]]` removes the latest identical action.
 */
export function boardspaceActions(
  tree: SgfTree,
): { actions: BoardspaceAction[]; players: BoardspacePlayers } {
  const actions: BoardspaceAction[] = [];
  const names: [string, string] = ["", ""];
  for (const node of mainLine(tree)) {
    for (const p of node.properties) {
      if (p.id === "P0" || p.id === "P1") {
        const player = p.id === "P0" ? 0 : 1;
        for (const v of p.values) {
          const m = ACTION.exec(v);
          if (m && !/^(time|ranking|id)$/i.test(m[2])) {
            const words = m[3].trim();
            actions.push({
              player,
              verb: m[2].toLowerCase(),
              args: words ? words.split(/\s+/) : [],
              raw: v.trim(),
              line: p.line,
              column: p.column,
            });
            continue;
          }
          const id = ID.exec(v);
          if (id) names[player] = id[1];
        }
      } else if (p.id === "P-1") {
        for (const v of p.values) {
          const m = POP.exec(v);
          if (!m) continue;
          const who = Number(m[1]);
          const raw = m[2].trim();
          for (let i = actions.length - 1; i >= 0; i--) {
            if (actions[i].player === who && actions[i].raw === raw) {
              actions.splice(i, 1);
              break;
            }
          }
        }
      }
    }
  }
  return { actions, players: { names } };
}
