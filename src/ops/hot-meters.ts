import type { Registry } from 'prom-client';

/**
 * Counters and histograms for the turn path. prom-client's label children hash and validate their labels on every
 * increment (about half a microsecond each, a few dozen per turn); these keep one plain object per label set,
 * created once, so an increment is an addition. They register in a prom-client `Registry` like its own meters
 * (`get()` answers the same shape), so the exposition and everything reading meters stay the same.
 */

type Labels<L extends string> = Readonly<Record<L, string>>;

interface MetricValue {
  readonly value: number;
  readonly labels: Record<string, string | number>;
  readonly metricName?: string;
}

interface MetricData {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'histogram';
  readonly values: MetricValue[];
  readonly aggregator: 'sum';
}

interface MeterOptions<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames?: readonly L[];
  readonly registers: readonly Registry[];
}

/** One label set of a counter. */
export interface HotCounterChild {
  inc(value?: number): void;
}

/** One label set of a histogram. */
export interface HotHistogramChild {
  observe(value: number): void;
}

abstract class HotMeter<L extends string, Child> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  /** Children by their label values joined with a separator no label value holds (`\u0000`). */
  protected readonly children = new Map<string, { readonly labels: Labels<L>; readonly child: Child }>();

  constructor(options: MeterOptions<L>) {
    this.name = options.name;
    this.help = options.help;
    this.labelNames = options.labelNames ?? [];
    for (const registry of options.registers) registry.registerMetric(this as never);
  }

  protected abstract create(): Child;

  /** The child of these label values (in `labelNames` order), created on first use; keep it for hot paths. */
  labels(...values: string[]): Child {
    const key = values.join('\u0000');
    let entry = this.children.get(key);
    if (entry === undefined) {
      if (values.length !== this.labelNames.length)
        throw new Error(`${this.name} takes the labels ${this.labelNames.join(', ')}`);
      const labels = {} as Record<L, string>;
      for (const [index, name] of this.labelNames.entries()) labels[name] = values[index]!;
      entry = { labels, child: this.create() };
      this.children.set(key, entry);
    }
    return entry.child;
  }

  protected childOf(labels: Labels<L> | undefined): Child {
    return this.labels(...this.labelNames.map((name) => String(labels?.[name] ?? '')));
  }

  reset(): void {
    this.children.clear();
  }
}

class CounterChild implements HotCounterChild {
  value = 0;

  inc(value = 1): void {
    if (!(value >= 0)) throw new Error(`a counter only goes up (got ${value})`);
    this.value += value;
  }
}

export class HotCounter<L extends string = never> extends HotMeter<L, CounterChild> {
  protected create(): CounterChild {
    return new CounterChild();
  }

  inc(labels?: Labels<L>, value = 1): void {
    this.childOf(labels).inc(value);
  }

  async get(): Promise<MetricData> {
    const values: MetricValue[] = [];
    for (const { labels, child } of this.children.values()) values.push({ value: child.value, labels: { ...labels } });
    return { name: this.name, help: this.help, type: 'counter', values, aggregator: 'sum' };
  }
}

class HistogramChild implements HotHistogramChild {
  readonly #bounds: readonly number[];
  /** Observations per bucket (not cumulative); the last one is `+Inf`. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(bounds: readonly number[]) {
    this.#bounds = bounds;
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.#bounds;
    let index = 0;
    while (index < bounds.length && value > bounds[index]!) index++;
    this.counts[index]!++;
    this.sum += value;
    this.count++;
  }
}

export class HotHistogram<L extends string = never> extends HotMeter<L, HistogramChild> {
  readonly buckets: readonly number[];

  constructor(options: MeterOptions<L> & { readonly buckets: readonly number[] }) {
    super(options);
    this.buckets = [...options.buckets].sort((a, b) => a - b);
  }

  protected create(): HistogramChild {
    return new HistogramChild(this.buckets);
  }

  observe(labels: Labels<L> | undefined, value: number): void {
    this.childOf(labels).observe(value);
  }

  async get(): Promise<MetricData> {
    const values: MetricValue[] = [];
    for (const { labels, child } of this.children.values()) {
      let cumulative = 0;
      for (const [index, bound] of this.buckets.entries()) {
        cumulative += child.counts[index]!;
        values.push({ value: cumulative, labels: { le: bound, ...labels }, metricName: `${this.name}_bucket` });
      }
      values.push({ value: child.count, labels: { le: '+Inf', ...labels }, metricName: `${this.name}_bucket` });
      values.push({ value: child.sum, labels: { ...labels }, metricName: `${this.name}_sum` });
      values.push({ value: child.count, labels: { ...labels }, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: 'histogram', values, aggregator: 'sum' };
  }
}
