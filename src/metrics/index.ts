export { Metrics } from "./registry.ts";
export { instrument, metricsRoutes } from "./routes.ts";
