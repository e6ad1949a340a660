import { type ErrorCode, KibitzError } from "../errors.ts";

/** One SGF property: an identifier and its values (escapes resolved), with where it starts. */
export interface SgfProperty {
  id: string;
  values: string[];
  line: number;
  column: number;
}

/** One SGF node (`;` followed by properties), with where its `;` is. */
export interface SgfNode {
  properties: SgfProperty[];
  line: number;
  column: number;
}

/** A game tree: its main sequence of nodes and the variations that follow it. */
export interface SgfTree {
  nodes: SgfNode[];
  variations: SgfTree[];
  line: number;
  column: number;
}

/** An SGF syntax error: code `sgf_syntax`, or `sgf_truncated` when the text ends too early. */
export class SgfSyntaxError extends KibitzError {
  readonly source: string;
  readonly line: number;
  readonly column: number;

  constructor(code: ErrorCode, source: string, line: number, column: number, what: string) {
    super(code, `${source}:${line}:${column}: ${what}`);
    this.name = "SgfSyntaxError";
    this.source = source;
    this.line = line;
    this.column = column;
  }
}

/** Deepest nesting of variations parseSgf reads; deeper texts are rejected (`too_deep`). */
export const MAX_SGF_DEPTH = 1000;

const LPAREN = 40, RPAREN = 41, SEMI = 59, LBRACK = 91, RBRACK = 93, BSLASH = 92;
const CR = 13, LF = 10, BOM = 0xfeff;

function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === LF || c === CR || c === 11 || c === 12;
}

function isLetter(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/** Cursor over the text that keeps line and column up to date. */
class Scanner {
  pos = 0;
  line = 1;
  lineStart = 0;

  constructor(readonly text: string, readonly source: string) {
    if (text.charCodeAt(0) === BOM) {
      this.pos = 1;
      this.lineStart = 1;
    }
  }

  get column(): number {
    return this.pos - this.lineStart + 1;
  }

  peek(): number {
    return this.pos < this.text.length ? this.text.charCodeAt(this.pos) : -1;
  }

  /** Advances one character, counting CRLF, LF and lone CR as line breaks. */
  next(): number {
    const c = this.text.charCodeAt(this.pos++);
    if (c === LF || (c === CR && this.text.charCodeAt(this.pos) !== LF)) {
      this.line++;
      this.lineStart = this.pos;
    }
    return c;
  }

  skipSpace(): void {
    while (this.pos < this.text.length && isSpace(this.text.charCodeAt(this.pos))) this.next();
  }

  fail(what: string, line = this.line, column = this.column): never {
    const code = this.pos >= this.text.length ? "sgf_truncated" : "sgf_syntax";
    throw new SgfSyntaxError(code, this.source, line, column, what);
  }

  describe(c: number): string {
    return c < 0 ? "end of file" : JSON.stringify(String.fromCharCode(c));
  }
}

/**
 * Parses an SGF (FF[4]) collection into its game trees.
 *
 * Beyond FF[4], identifiers may contain lowercase letters (FF[3]), digits and `-` after the first
 * letter, because boardspace.net writes `P0`, `P1` and `P-1`. Line breaks inside values are
 * normalized to `\n`; an escaped line break is removed (a soft break); `\x` becomes `x`.
 * Errors are SgfSyntaxError with the line and column of the offending character; variations
 * nested deeper than MAX_SGF_DEPTH are rejected (`too_deep`) before they can overflow the stack.
 */
export function parseSgf(text: string, source = "<sgf>"): SgfTree[] {
  const s = new Scanner(text, source);
  const trees: SgfTree[] = [];
  s.skipSpace();
  while (s.pos < text.length) {
    const c = s.peek();
    if (c !== LPAREN) s.fail(`expected "(" to start a game tree, found ${s.describe(c)}`);
    trees.push(parseTree(s, 1));
    s.skipSpace();
  }
  return trees;
}

function parseTree(s: Scanner, depth: number): SgfTree {
  const line = s.line, column = s.column;
  if (depth > MAX_SGF_DEPTH) {
    throw new SgfSyntaxError(
      "too_deep",
      s.source,
      line,
      column,
      `variations nested deeper than ${MAX_SGF_DEPTH} levels`,
    );
  }
  s.next(); // "("
  s.skipSpace();
  const tree: SgfTree = { nodes: [], variations: [], line, column };
  while (s.peek() === SEMI) {
    tree.nodes.push(parseNode(s));
    s.skipSpace();
  }
  if (tree.nodes.length === 0) {
    s.fail(`a game tree must start with a node ";", found ${s.describe(s.peek())}`);
  }
  while (s.peek() === LPAREN) {
    tree.variations.push(parseTree(s, depth + 1));
    s.skipSpace();
  }
  const c = s.peek();
  if (c !== RPAREN) {
    if (c < 0) s.fail(`game tree opened at ${line}:${column} is not closed`);
    s.fail(`expected ";", "(" or ")" in a game tree, found ${s.describe(c)}`);
  }
  s.next();
  return tree;
}

function parseNode(s: Scanner): SgfNode {
  const node: SgfNode = { properties: [], line: s.line, column: s.column };
  s.next(); // ";"
  s.skipSpace();
  while (isLetter(s.peek())) {
    node.properties.push(parseProperty(s));
    s.skipSpace();
  }
  return node;
}

function parseProperty(s: Scanner): SgfProperty {
  const line = s.line, column = s.column;
  const start = s.pos;
  for (;;) {
    const c = s.peek();
    if (isLetter(c) || (c >= 48 && c <= 57) || c === 45) s.next();
    else break;
  }
  const id = s.text.slice(start, s.pos);
  s.skipSpace();
  if (s.peek() !== LBRACK) {
    s.fail(`property ${id} needs a value "[...]", found ${s.describe(s.peek())}`);
  }
  const values: string[] = [];
  while (s.peek() === LBRACK) {
    values.push(parseValue(s));
    s.skipSpace();
  }
  return { id, values, line, column };
}

function parseValue(s: Scanner): string {
  const line = s.line, column = s.column;
  s.next(); // "["
  const text = s.text;
  let out = "";
  let chunk = s.pos;
  for (;;) {
    if (s.pos >= text.length) s.fail(`value opened at ${line}:${column} is not closed by "]"`);
    const c = text.charCodeAt(s.pos);
    if (c === RBRACK) {
      out += text.slice(chunk, s.pos);
      s.next();
      return out;
    }
    if (c === BSLASH) {
      out += text.slice(chunk, s.pos);
      s.next();
      if (s.pos >= text.length) s.fail(`value opened at ${line}:${column} ends inside an escape`);
      const e = s.next();
      if (e === CR) {
        if (s.peek() === LF) s.next();
      } else if (e === LF) {
        if (s.peek() === CR) s.next();
      } else {
        out += String.fromCharCode(e);
      }
      chunk = s.pos;
      continue;
    }
    if (c === CR) {
      out += text.slice(chunk, s.pos) + "\n";
      s.next();
      if (s.peek() === LF) s.next();
      chunk = s.pos;
      continue;
    }
    s.next();
  }
}

/** The first value of property `id` in `node`, or undefined. */
export function sgfValue(node: SgfNode, id: string): string | undefined {
  for (const p of node.properties) if (p.id === id) return p.values[0];
  return undefined;
}
