import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { LinkStats } from '../api/client';
import { bucketName } from './bucket-label';
import type { Interval } from './stats-query';

type Bucket = LinkStats['timeseries'][number];

const WHOLE_STEPS = [
  1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 1e7, 1e8, 1e9,
];

/** Day, week and month buckets start at midnight in the view's zone (SPEC §15), so the axis reads in that zone too. */
const inZone =
  (tz: string) =>
  (seconds: number): Date =>
    uPlot.tzDate(new Date(seconds * 1000), tz === 'UTC' ? 'Etc/UTC' : tz);

function chartOptions(width: number, interval: Interval, tz: string): uPlot.Options {
  return {
    width,
    height: 240,
    tzDate: inZone(tz),
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
    // Clicks are whole numbers: no 0.2-click ticks on a quiet link.
    axes: [{}, { label: `Clicks per ${interval}`, size: 50, incrs: WHOLE_STEPS }],
    series: [
      { label: `${bucketName(interval)} (${tz})` },
      {
        label: 'People',
        stroke: '#2563eb',
        fill: 'rgba(37, 99, 235, 0.12)',
        width: 2,
        points: { show: true, size: 5 },
      },
      // Bots apart (SPEC §15): their own dashed line, never added to the people's.
      { label: 'Bots', stroke: '#b45309', dash: [6, 4], width: 1.5, points: { show: true, size: 4 } },
    ],
    legend: { show: true },
    cursor: { drag: { x: false, y: false } },
  };
}

/**
 * Clicks over time, one point per bucket of the window (Plausible's main graph), drawn by uPlot on a
 * canvas as wide as its container. The same numbers are in ClicksTable for anyone who cannot see it.
 * Clicks by people and by bots are two series.
 */
export function ClicksChart({
  timeseries,
  interval,
  tz,
  label,
}: {
  timeseries: Bucket[];
  interval: Interval;
  tz: string;
  label: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const data: uPlot.AlignedData = [
      timeseries.map((b) => Date.parse(b.start) / 1000),
      timeseries.map((b) => b.clicks),
      timeseries.map((b) => b.bots),
    ];
    const plot = new uPlot(chartOptions(Math.max(200, el.clientWidth), interval, tz), data, el);
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(200, el.clientWidth), height: 240 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [timeseries, interval, tz]);
  return <div class="chart" ref={box} role="img" aria-label={label} />;
}
