// The API reference bundle, imported as files (`with { type: "file" }`): a path that the compiled
// binary embeds, read on the first visit of /api/docs.
declare module "swagger-ui-dist/swagger-ui-bundle.js" {
  const path: string;
  export default path;
}
declare module "swagger-ui-dist/swagger-ui.css" {
  const path: string;
  export default path;
}
