// format()'s fixed-point clause (%f, %.Nf) as cel-go prints it: Go's strconv.FormatFloat(x, 'f',
// N, 64) rounds the exact binary value, ties to even. The engine used Intl.NumberFormat, which
// rounds the shortest decimal that reads back as x: '%.2f'.format([2.675]) gave "2.68", but the
// double 2.675 is 2.67499999999999982236431605997495353221893310546875, so Go says "2.67".
// Every other clause, and every error, is still the engine's.
import type { CelList } from "@bufbuild/cel";

/** Above this the engine refuses the precision (Intl's limit): left to it, error and all. */
const MAX_PRECISION = 100;

/** x rounded to `precision` decimals from its exact value, half to even, sign kept ("-0.00"). */
export function fixedPoint(x: number, precision: number): string {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const negative = bits >> 63n === 1n;
  const exponent = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  // |x| = mantissa × 2^power, exactly.
  const mantissa = exponent === 0 ? fraction : fraction | (1n << 52n);
  const power = exponent === 0 ? -1074 : exponent - 1075;
  const scaled = mantissa * 10n ** BigInt(precision);
  let q: bigint;
  if (power >= 0) q = scaled << BigInt(power);
  else {
    const den = 1n << BigInt(-power);
    q = scaled / den;
    const twice = (scaled % den) * 2n;
    if (twice > den || (twice === den && (q & 1n) === 1n)) q += 1n;
  }
  let digits = q.toString();
  if (precision > 0) {
    digits = digits.padStart(precision + 1, "0");
    digits = `${digits.slice(0, -precision)}.${digits.slice(-precision)}`;
  }
  return negative ? `-${digits}` : digits;
}

type Format = (this: string, args: CelList) => string;

/**
 * The engine's format(), with each fixed-point clause whose argument is a finite double printed
 * here and written into the format string as text. The clauses are read as the engine reads
 * them; at anything it would refuse, the rest is left to it, so its errors stay the same.
 */
export function withGoFixedPoint(engine: Format): Format {
  return function (this: string, args: CelList): string {
    let out = "";
    const rest: unknown[] = [];
    let j = 0;
    let i = 0;
    while (i < this.length) {
      const c = this[i];
      if (c !== "%") {
        out += c;
        i++;
        continue;
      }
      const m = /^%(?:%|(?:\.(\d+))?([a-zA-Z]))/.exec(this.slice(i, i + 8 + MAX_PRECISION));
      if (!m) break;
      if (m[0] === "%%") {
        out += "%%";
        i += 2;
        continue;
      }
      const value = j < args.size ? args.get(j) : undefined;
      const precision = m[1] === undefined ? 6 : Number(m[1]);
      if (m[2] === "f" && typeof value === "number" && Number.isFinite(value) && precision <= MAX_PRECISION) {
        out += fixedPoint(value, precision);
      } else {
        out += m[0];
        if (j < args.size) rest.push(value);
      }
      j++;
      i += m[0].length;
    }
    out += this.slice(i);
    for (; j < args.size; j++) rest.push(args.get(j));
    const list = { size: rest.length, get: (k: number) => rest[k] } as unknown as CelList;
    return engine.call(out, list);
  };
}
