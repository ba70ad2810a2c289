// xspattern (fontoxpath's regex compiler, which its matches() runs) ships types its package.json
// "exports" does not point at: what xpath.ts uses of it, as xspattern's own d.ts declares it.
declare module "xspattern" {
  /** Compiles `pattern`; throws on a pattern it cannot read. */
  export function compile(pattern: string, options?: { language: "xsd" | "xpath" }): (str: string) => boolean;
}
