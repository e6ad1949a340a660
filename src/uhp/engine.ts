// The Universal Hive Protocol engine: one command line in, one reply out (always ending in "ok").
import { isKibitzError } from "../errors.ts";
import { HiveGame } from "../hive/game.ts";
import { PASS } from "../hive/move.ts";
import { perftWithin } from "../hive/perft.ts";
import { searchBestMove } from "./alphabeta.ts";

/** Engine name and version reported by `info`. */
export const UHP_ENGINE_ID = "Kibitz 0.1.0";

/** A player the engine can host: picks a move for the position within limits. */
export interface UhpPlayer {
  bestMove(game: HiveGame, limits: { depth?: number; timeMs?: number }): number;
}

/** The built-in alpha-beta player. */
export const alphaBetaPlayer: UhpPlayer = {
  bestMove: (game, limits) => searchBestMove(game, limits).move,
};

/** A network player the engine can load (see src/uhp/mcts_player.ts): its name and the player. */
export interface UhpModel {
  name: string;
  player: UhpPlayer;
  /** Switches the player's hybrid search on or off (the Hybrid option), when it has one. */
  setHybrid?(on: boolean): void;
  /** Sets the MCTS loss check's depth in plies (the LossCheck option; 0: off), when it has one. */
  setLossCheck?(plies: number): void;
}

interface IntOption {
  value: number;
  def: number;
  min: number;
  max: number;
  help: string;
}

const NO_GAME = "No game in progress. Try 'newgame' to start a new game.";
const MAX_PERFT = 6;

const HELP = [
  "Commands:",
  "info",
  "newgame [GameTypeString|GameString]",
  "play MoveString",
  "pass",
  "validmoves",
  "bestmove [time hh:mm:ss|depth N]",
  "undo [N]",
  "options [get Name|set Name Value]",
  `perft N (extension, N <= ${MAX_PERFT}, stops after PerftMaxTime seconds)`,
  "help",
  "exit",
];

class UhpError extends Error {}

/** Parses `hh:mm:ss` (each part an unsigned integer, minutes and seconds below 60) into ms. */
export function parseUhpTime(s: string): number {
  const m = /^(\d{1,3}):([0-5]?\d):([0-5]?\d)$/.exec(s);
  if (!m) throw new UhpError(`Invalid time "${s}"; expected hh:mm:ss.`);
  return ((Number(m[1]) * 60 + Number(m[2])) * 60 + Number(m[3])) * 1000;
}

/**
 * A UHP engine session. `handle(line)` runs one command and returns the full reply, whose last line
 * is `ok`; errors are `err <message>` or `invalidmove <reason>`, and no input can make it throw.
 */
export class UhpEngine {
  /** The game in progress, or null before `newgame`. */
  game: HiveGame | null = null;
  private readonly options: Record<string, IntOption> = {
    BestMoveDepth: {
      value: 2,
      def: 2,
      min: 1,
      max: 12,
      help: "plies searched by a plain `bestmove`",
    },
    BestMoveMaxTime: {
      value: 10,
      def: 10,
      min: 1,
      max: 3600,
      help: "seconds any `bestmove` may take, `bestmove depth N` included",
    },
    PerftMaxTime: {
      value: 10,
      def: 10,
      min: 1,
      max: 3600,
      help: "seconds a `perft N` may take before it gives up with an error",
    },
  };

  constructor(
    private readonly player: UhpPlayer = alphaBetaPlayer,
    /** With a model, `bestmove` runs its player (MCTS) while the UseModel option is 1. */
    private readonly model: UhpModel | null = null,
  ) {
    if (model) {
      this.options.UseModel = {
        value: 1,
        def: 1,
        min: 0,
        max: 1,
        help: "1: bestmove uses MCTS with the loaded network; 0: alpha-beta",
      };
      if (model.setHybrid) {
        this.options.Hybrid = {
          value: 0,
          def: 0,
          min: 0,
          max: 1,
          help: "1: MCTS blends the alpha-beta static score into values and priors (HYBRID_SEARCH)",
        };
      }
      if (model.setLossCheck) {
        this.options.LossCheck = {
          value: 0,
          def: 0,
          min: 0,
          max: 7,
          help:
            "N > 0: MCTS avoids root moves after which the opponent forces a win within N plies",
        };
      }
    }
  }

  /** The reply to `info`, also printed at start-up (names the model when one is loaded). */
  info(): string {
    const m = this.model ? ` (MCTS, model ${this.model.name})` : "";
    return `id ${UHP_ENGINE_ID}${m}\nMosquito;Ladybug;Pillbug\nok`;
  }

  /** Runs one command line and returns the reply (lines joined by "\n", ending with "ok"). */
  handle(line: string): string {
    let body: string;
    try {
      body = this.dispatch(line.trim());
    } catch (e) {
      if (isKibitzError(e, "invalid_move")) body = `invalidmove ${e.message}`;
      else if (e instanceof UhpError || isKibitzError(e)) body = `err ${e.message}`;
      else body = `err ${e instanceof Error ? e.message : String(e)}`;
      body = body.replace(/[\r\n]+/g, " ");
    }
    return body === "" ? "ok" : `${body}\nok`;
  }

  private dispatch(line: string): string {
    const space = line.search(/\s/);
    const cmd = (space < 0 ? line : line.slice(0, space)).toLowerCase();
    const arg = space < 0 ? "" : line.slice(space + 1).trim();
    switch (cmd) {
      case "info":
        return this.info().slice(0, -3);
      case "help":
        return HELP.join("\n");
      case "newgame":
        this.game = arg === "" ? new HiveGame(0) : HiveGame.fromGameString(arg);
        return this.game.gameString();
      case "play":
        if (arg === "") throw new UhpError("play needs a MoveString, e.g. play wA1 -bQ");
        this.requireGame().playString(arg);
        return this.requireGame().gameString();
      case "pass":
        this.requireGame().playString("pass");
        return this.requireGame().gameString();
      case "validmoves": {
        const g = this.requireGame();
        const moves = g.validMoves();
        return moves.map((m) => g.moveString(m)).join(";");
      }
      case "bestmove":
        return this.bestMove(arg);
      case "undo": {
        const g = this.requireGame();
        const n = arg === "" ? 1 : Number(arg);
        if (!/^\d+$/.test(arg === "" ? "1" : arg) || n < 1) {
          throw new UhpError(`Invalid undo count "${arg}"; expected a positive integer.`);
        }
        if (n > g.historyLength) {
          throw new UhpError(`Unable to undo ${n} moves; only ${g.historyLength} played.`);
        }
        for (let i = 0; i < n; i++) g.undo();
        return g.gameString();
      }
      case "options":
        return this.optionsCommand(arg);
      case "perft": {
        const g = this.requireGame();
        if (!/^\d+$/.test(arg) || Number(arg) > MAX_PERFT) {
          throw new UhpError(`Invalid perft depth "${arg}"; expected 0..${MAX_PERFT}.`);
        }
        const limit = this.options.PerftMaxTime.value;
        const n = perftWithin(g, Number(arg), limit * 1000);
        if (n === null) {
          throw new UhpError(
            `perft ${arg} stopped after ${limit} s (PerftMaxTime); try a smaller depth.`,
          );
        }
        return String(n);
      }
      case "":
        return "";
      default:
        throw new UhpError("Invalid command. Try 'help' to see a list of valid commands.");
    }
  }

  private requireGame(): HiveGame {
    if (!this.game) throw new UhpError(NO_GAME);
    return this.game;
  }

  private bestMove(arg: string): string {
    const g = this.requireGame();
    if (g.isOver()) throw new UhpError("The game is over.");
    const parts = arg.split(/\s+/).filter((s) => s !== "");
    // BestMoveMaxTime caps every search that is not given a time of its own, so a deep
    // `bestmove depth N` still answers in time with the best move of the deepest finished ply.
    const maxMs = this.options.BestMoveMaxTime.value * 1000;
    let limits: { depth?: number; timeMs?: number };
    if (parts.length === 0) {
      limits = { depth: this.options.BestMoveDepth.value, timeMs: maxMs };
    } else if (parts.length === 2 && parts[0].toLowerCase() === "time") {
      limits = { timeMs: parseUhpTime(parts[1]) };
    } else if (parts.length === 2 && parts[0].toLowerCase() === "depth") {
      const d = Number(parts[1]);
      if (!/^\d+$/.test(parts[1]) || d < 1 || d > 64) {
        throw new UhpError(`Invalid depth "${parts[1]}"; expected 1..64.`);
      }
      limits = { depth: d, timeMs: maxMs };
    } else {
      throw new UhpError(`Invalid bestmove arguments "${arg}"; expected time hh:mm:ss or depth N.`);
    }
    let move: number;
    if (this.model && this.options.UseModel?.value === 1) {
      // The network player stops at the time given and never after BestMoveMaxTime.
      const cap = this.options.BestMoveMaxTime.value * 1000;
      this.model.setHybrid?.(this.options.Hybrid?.value === 1);
      this.model.setLossCheck?.(this.options.LossCheck?.value ?? 0);
      move = this.model.player.bestMove(g, {
        ...limits,
        timeMs: Math.min(limits.timeMs ?? cap, cap),
      });
    } else move = this.player.bestMove(g, limits);
    return move === PASS ? "pass" : g.moveString(move);
  }

  private optionLine(name: string): string {
    const o = this.options[name];
    return `${name};int;${o.value};${o.def};${o.min};${o.max}`;
  }

  private findOption(name: string | undefined): string {
    const key = Object.keys(this.options).find((k) => k.toLowerCase() === name?.toLowerCase());
    if (!key) {
      throw new UhpError(
        `Unknown option "${name ?? ""}"; valid: ${Object.keys(this.options).join(", ")}.`,
      );
    }
    return key;
  }

  private optionsCommand(arg: string): string {
    const parts = arg.split(/\s+/).filter((s) => s !== "");
    if (parts.length === 0) {
      return Object.keys(this.options).map((k) => this.optionLine(k)).join("\n");
    }
    const sub = parts[0].toLowerCase();
    if (sub === "get" && parts.length === 2) return this.optionLine(this.findOption(parts[1]));
    if (sub === "set" && parts.length === 3) {
      const key = this.findOption(parts[1]);
      const o = this.options[key];
      const v = Number(parts[2]);
      if (!/^-?\d+$/.test(parts[2]) || v < o.min || v > o.max) {
        throw new UhpError(`Invalid value "${parts[2]}" for ${key}; expected ${o.min}..${o.max}.`);
      }
      o.value = v;
      return this.optionLine(key);
    }
    throw new UhpError(
      "Invalid options command; expected options, options get Name, options set Name Value.",
    );
  }
}
