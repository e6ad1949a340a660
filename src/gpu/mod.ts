export * from "./device.ts";
export * from "./hardware_nodes.ts";
export * from "./pipeline.ts";
export * from "./buffers.ts";
export * from "./dispatch.ts";
export * from "./timing.ts";
export * from "./selftest.ts";
export * from "./api_count.ts";
