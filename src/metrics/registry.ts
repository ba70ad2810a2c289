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
// key() runs three times per run (request, step, final status): formatting cost ~3 µs of sorting
// and escaping each time. The label sets are few (routes × methods × statuses), so formatted keys
// are remembered by a raw concatenation (each value prefixed by its length, so no two label sets
// share one); past the bound they are formatted every time.
const KEY_CACHE_MAX = 10_000;
const formatted = new Map<string, string>();
const key = (l: Labels) => {
  let raw = "";
  for (const k in l) raw += `${k}=${l[k]!.length}:${l[k]}`;
  let out = formatted.get(raw);
  if (out === undefined) {
    out = format(l);
    if (formatted.size < KEY_CACHE_MAX) formatted.set(raw, out);
  }
  return out;
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
  render(): string {
    const out = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const [k, v] of this.series) out.push(`${this.name}{${k}} ${v}`);
    return out.join("\n");
  }
}

type GaugeRead = () => Array<[Labels, number]>;

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
