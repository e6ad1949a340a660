export * from "./limit.ts";
export * from "./kuhn.ts";
export * from "./leduc.ts";
export * from "./registry.ts";
