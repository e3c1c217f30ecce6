/**
 * A time line chart (uPlot) that fits its box, redraws on resize and takes its colours from the theme (light or
 * dark). The canvas is an image for screen readers, named by `summary`; the numbers themselves are in the caption.
 */
import { useEffect, useRef, useSyncExternalStore } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Line {
  readonly label: string;
  readonly values: readonly (number | null)[];
  /** A CSS custom property of the theme, e.g. `--chart-1`. */
  readonly colorVar: string;
}

const darkQuery = () => window.matchMedia('(prefers-color-scheme: dark)');
/** 'dark' or 'light' as the system says now, re-rendering when it changes (the chart then redraws in its colours). */
function useColorScheme(): 'dark' | 'light' {
  return useSyncExternalStore(
    (callback) => {
      const query = darkQuery();
      query.addEventListener('change', callback);
      return () => query.removeEventListener('change', callback);
    },
    () => (darkQuery().matches ? 'dark' : 'light'),
  );
}

const cssVar = (element: Element, name: string) => getComputedStyle(element).getPropertyValue(name).trim() || 'gray';

export function LineChart({
  x,
  lines,
  summary,
  format,
  height = 180,
}: {
  x: readonly number[];
  lines: readonly Line[];
  summary: string;
  format: (value: number) => string;
  height?: number;
}) {
  const box = useRef<HTMLDivElement>(null);
  const scheme = useColorScheme();
  // biome-ignore lint/correctness/useExhaustiveDependencies: the colours are read from the theme's CSS, so a change of the system's scheme redraws
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const text = cssVar(element, '--muted');
    const grid = cssVar(element, '--surface-2');
    const axis = { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
    const options: uPlot.Options = {
      width: Math.max(200, element.clientWidth),
      height,
      legend: { show: true, live: false },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true }, y: { range: (_u, min, max) => [Math.min(0, min), max > 0 ? max * 1.1 : 1] } },
      axes: [axis, { ...axis, size: 60, values: (_u, ticks) => ticks.map(format) }],
      series: [
        {},
        ...lines.map((line) => ({
          label: line.label,
          stroke: cssVar(element, line.colorVar),
          width: 2,
          spanGaps: false,
          value: (_u: uPlot, v: number | null) => (v === null ? '–' : format(v)),
        })),
      ],
    };
    const plot = new uPlot(options, [x as number[], ...lines.map((l) => l.values as (number | null)[])], element);
    const observer = new ResizeObserver(() => plot.setSize({ width: Math.max(200, element.clientWidth), height }));
    observer.observe(element);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [x, lines, format, height, scheme]);
  return <div ref={box} className="line-chart" role="img" aria-label={summary} />;
}
