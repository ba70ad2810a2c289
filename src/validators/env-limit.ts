// A validator's bound read from its worker's environment (the pool puts the server's settings
// there: src/deps.ts): ASSAY_MAX_YAML_BYTES, ASSAY_MAX_SCHEMATRON_ELEMENTS. Anything but a plain
// count is the default (the server has refused it at start already).
export function limitFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || !/^\d{1,10}$/.test(raw.trim())) return fallback;
  return Number(raw.trim());
}
