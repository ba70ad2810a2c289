// Exact values past what a double holds: long or exponent numbers (Frictionless reads numbers as
// Python Decimals) and datetimes or times written finer than the millisecond.

/**
 * A number cell that a double may not hold: more than 15 characters, or an exponent
 * (9007199254740993, 0.10000000000000001, 1e400). Frictionless reads numbers as Python Decimals,
 * so unique, keys and enum compare their exact value (`decimal`, worked out when a key asks);
 * valueOf is the nearest double, which minimum and maximum compare first. Shorter cells are
 * doubles: up to 15 significant digits a double keeps the decimal (IEEE 754), and the common
 * cell then costs what it did. A datetime (in ms) or time (in s) written past the millisecond is
 * one too (parseTemporal), so that a microsecond or less apart is two values.
 */
export class ExactNumber {
  private exact: string | undefined = undefined;
  constructor(
    readonly text: string,
    readonly approx: number,
  ) {}
  get decimal(): string {
    this.exact ??= exactDecimal(this.text);
    return this.exact;
  }
  valueOf(): number {
    return this.approx;
  }
}

const DECIMAL_PARTS = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/**
 * The one text of a decimal's value: no sign on zero, no leading or trailing zeros, digits then
 * the exponent ("1.50" and "15e-1" are "15e-1"), written out as an integer up to 20 zeros so that
 * integers read as such ("100", "1E2" and 100n are "100"); further out the exponent stays, so that
 * "1e999999" is no million-character key. `s` is a decimal (DECIMAL) or a finite double's String.
 */
export function exactDecimal(s: string): string {
  const m = DECIMAL_PARTS.exec(s);
  if (!m) return s;
  const fraction = m[3] ?? "";
  const digits = (m[2]! + fraction).replace(/^0+/, "");
  if (digits === "") return "0";
  const kept = digits.replace(/0+$/, "");
  const shift = digits.length - kept.length - fraction.length;
  // A written exponent of 16 digits or more is beyond what a double counts exactly.
  const exp =
    m[4] === undefined || m[4].length < 16 ? Number(m[4] ?? 0) + shift : BigInt(m[4]) + BigInt(shift);
  const sign = m[1] === "-" ? "-" : "";
  return exp >= 0 && exp <= 20 ? sign + kept + "0".repeat(Number(exp)) : `${sign}${kept}e${exp}`;
}
