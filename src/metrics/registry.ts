// A minimal Prometheus text-format registry (exposition format 0.0.4): counters, gauges read at
// scrape time, histograms with fixed buckets. No dependency needed for this much.

type Labels = Record<string, string>;
const NEEDS_ESCAPE = /[\\"\n]/;
const escapeValue = (v: string) =>
  NEEDS_ESCAPE.test(v) ? v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n") : v;
/** Series key: labels sorted by name (code-unit order; names are ASCII). */
const format = (l: Labels) => {
  const names = Object.keys(l);
  if (names.length > 1) names.sort();
  let out = "";
  for (const k of names) out += `${out ? "," : ""}${k}="${escapeValue(l[k]!)}"`;
  return out;
};
// key() runs three times per run (request, step, final status): formatting costs ~3 µs of sorting
// and escaping each time. The label sets are few (routes × methods × statuses), so formatted keys
// are remembered in a tree walked by label name, then value, in the caller's order: two Map
// lookups a label and no string built (a raw concatenation as the lookup key cost ~0.4 µs a call,
// measured: docs/benchmarks.md, ninth pass). Past the bound on nodes, keys are formatted every time.
const KEY_CACHE_MAX = 10_000;
interface KeyNode {
  next: Map<string, KeyNode> | null;
  key: string | undefined;
}
const keyRoot: KeyNode = { next: null, key: undefined };
let keyNodes = 0;
/** The child of `n` for `s`; null once the tree is full and `s` is new there. */
const child = (n: KeyNode, s: string): KeyNode | null => {
  n.next ??= new Map();
  let c = n.next.get(s);
  if (c === undefined) {
    if (keyNodes >= KEY_CACHE_MAX) return null;
    keyNodes++;
    c = { next: null, key: undefined };
    n.next.set(s, c);
  }
  return c;
};
const key = (l: Labels) => {
  let n: KeyNode | null = keyRoot;
  for (const k in l) {
    n = child(n, k);
    if (n) n = child(n, l[k]!);
    if (!n) return format(l);
  }
  n.key ??= format(l);
  return n.key;
};

export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

class Histogram {
  private series = new Map<string, { counts: number[]; sum: number; count: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets = DURATION_BUCKETS,
  ) {}
  observe(labels: Labels, value: number) {
    const k = key(labels);
    let s = this.series.get(k);
    if (!s) {
      s = { counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.series.set(k, s);
    }
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]!) s.counts[i]!++;
    s.sum += value;
    s.count++;
  }
  /** What was observed since the last drain, by series; forgotten here (an HTTP thread's, for the main thread). */
  drain(): HistogramDelta {
    const out: HistogramDelta = [];
    for (const [k, s] of this.series) out.push([k, s.counts, s.sum, s.count]);
    this.series.clear();
    return out;
  }
  /** Adds another registry's drain (same buckets) to this one. */
  absorb(d: HistogramDelta) {
    for (const [k, counts, sum, count] of d) {
      let s = this.series.get(k);
      if (!s) {
        s = { counts: this.buckets.map(() => 0), sum: 0, count: 0 };
        this.series.set(k, s);
      }
      for (let i = 0; i < counts.length; i++) s.counts[i]! += counts[i]!;
      s.sum += sum;
      s.count += count;
    }
  }
  render(): string {
    const out = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const [k, s] of this.series) {
      const sep = k ? `${k},` : "";
      this.buckets.forEach((b, i) => {
        out.push(`${this.name}_bucket{${sep}le="${b}"} ${s.counts[i]}`);
      });
      out.push(
        `${this.name}_bucket{${sep}le="+Inf"} ${s.count}`,
        `${this.name}_sum{${k}} ${s.sum}`,
        `${this.name}_count{${k}} ${s.count}`,
      );
    }
    return out.join("\n");
  }
}

class Counter {
  private series = new Map<string, number>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}
  inc(labels: Labels = {}, by = 1) {
    const k = key(labels);
    this.series.set(k, (this.series.get(k) ?? 0) + by);
  }
  /** Counted since the last drain, by series; forgotten here. */
  drain(): CounterDelta {
    const out: CounterDelta = [...this.series];
    this.series.clear();
    return out;
  }
  absorb(d: CounterDelta) {
    for (const [k, v] of d) this.series.set(k, (this.series.get(k) ?? 0) + v);
  }
  render(): string {
    const out = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const [k, v] of this.series) out.push(`${this.name}{${k}} ${v}`);
    return out.join("\n");
  }
}

type GaugeRead = () => Array<[Labels, number]>;

/** Series as formatted label keys: the same text in every thread (format sorts the labels). */
export type HistogramDelta = Array<[key: string, counts: number[], sum: number, count: number]>;
export type CounterDelta = Array<[key: string, value: number]>;
/** An HTTP thread's observations since its last report (src/http/threads/), added up on the main thread. */
export interface MetricsDelta {
  http: HistogramDelta;
  steps: HistogramDelta;
  runs: CounterDelta;
}

export class Metrics {
  /**
   * `node`: this server's name, added as a label to every series, so that the nodes sharing one
   * database can be told apart (and summed) in one Prometheus.
   */
  constructor(readonly node?: string) {}
  readonly httpDuration = new Histogram(
    "assay_http_request_duration_seconds",
    "HTTP request duration by route, method and status.",
  );
  readonly stepDuration = new Histogram(
    "assay_step_duration_seconds",
    "Validation step duration by validator and status.",
  );
  readonly runsFinished = new Counter(
    "assay_runs_finished_total",
    "Runs that reached a final status since start, by status.",
  );
  /** The histograms and counters observed since the last call, forgotten here. */
  drain(): MetricsDelta {
    return {
      http: this.httpDuration.drain(),
      steps: this.stepDuration.drain(),
      runs: this.runsFinished.drain(),
    };
  }
  absorb(d: MetricsDelta) {
    this.httpDuration.absorb(d.http);
    this.stepDuration.absorb(d.steps);
    this.runsFinished.absorb(d.runs);
  }
  private gauges: { name: string; help: string; read: GaugeRead; type: "gauge" | "counter" }[] = [];
  private refreshers: (() => Promise<void>)[] = [];
  /** Work done before each scrape (database counts: asynchronous on PostgreSQL). */
  beforeRender(fn: () => Promise<void>) {
    this.refreshers.push(fn);
  }
  async renderAsync(): Promise<string> {
    await Promise.all(this.refreshers.map((f) => f()));
    return this.render();
  }
  /** A value read at scrape time; `counter` for one that only grows (kept elsewhere). */
  gauge(name: string, help: string, read: GaugeRead, type: "gauge" | "counter" = "gauge") {
    this.gauges.push({ name, help, read, type });
  }
  render(): string {
    const text = this.renderSeries();
    if (!this.node) return text;
    const label = `node="${escapeValue(this.node)}"`;
    return text.replace(/^([a-z_:][a-z0-9_:]*)\{(\}?)/gm, (_m, name: string, close: string) =>
      close ? `${name}{${label}}` : `${name}{${label},`,
    );
  }
  private renderSeries(): string {
    const parts = [this.httpDuration.render(), this.stepDuration.render(), this.runsFinished.render()];
    for (const g of this.gauges) {
      const lines = [`# HELP ${g.name} ${g.help}`, `# TYPE ${g.name} ${g.type}`];
      for (const [labels, v] of g.read()) lines.push(`${g.name}{${key(labels)}} ${v}`);
      parts.push(lines.join("\n"));
    }
    return `${parts.join("\n")}\n`;
  }
}
