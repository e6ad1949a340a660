export * from "./format.ts";
export * from "./hash.ts";
export * from "./store.ts";
export * from "./update.ts";
export * from "./gpu.ts";
