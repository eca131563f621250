// Time-series charts (uPlot, npm `uplot`): every chart of a view shares one cursor (sync key) and
// the same x range, so a spike lines up across GPU time, requests, latency and GPU metrics; a drag
// on any chart selects a new range.
import uPlot from 'uplot';

const sync = uPlot.sync('inferscope');

function themeColor(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || '#888';
}

// Adds a chart to `parent`. `x`: Unix seconds; `series`: [{label, color, values, fmt}];
// `stacked`: values are drawn stacked (the legend still shows each series' own value);
// `onSelect(fromS, toS)` is called after a drag selection.
export function timeChart(parent, { title, x, series, stacked = false, yFmt = (v) => v, onSelect, yRange, xRange }) {
  const box = document.createElement('figure');
  box.className = 'chart';
  box.setAttribute('aria-label', title);
  const cap = document.createElement('figcaption');
  cap.textContent = title;
  box.append(cap);
  parent.append(box);
  let data = series.map((s) => s.values);
  if (stacked) {
    // Cumulative sums, top series first so each fill covers only its own band.
    const acc = new Array(x.length).fill(0);
    const cum = data.map((vals) => vals.map((v, i) => (acc[i] += v ?? 0)));
    data = cum.reverse();
    series = [...series].reverse();
  }
  const raw = stacked ? [...series].map((s) => s.values) : null;
  const fg = themeColor('--fg'), grid = themeColor('--grid');
  const axis = { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } };
  const opts = {
    // Views render into a detached node (swapped in when complete): size from the page's main.
    width: Math.max(320, (parent.clientWidth || document.getElementById('view').clientWidth - 32) - 8),
    height: 170,
    cursor: { sync: { key: sync.key, setSeries: false }, drag: { x: true, y: false } },
    legend: { live: true },
    scales: { x: xRange ? { time: true, range: () => xRange } : { time: true }, y: yRange ? { range: yRange } : {} },
    axes: [axis, { ...axis, size: 64, values: (u, vals) => vals.map(yFmt) }],
    series: [
      { label: 'time', value: (u, v) => (v == null ? '–' : new Date(v * 1e3).toISOString().slice(11, 19)) },
      ...series.map((s, si) => ({
        label: s.label,
        stroke: s.color,
        fill: stacked ? s.color + 'cc' : undefined,
        width: stacked ? 0 : 1.5,
        points: { show: false },
        spanGaps: false,
        value: (u, v, sIdx, idx) => {
          const shown = stacked && idx != null ? raw[si][idx] : v;
          return shown == null ? '–' : (s.fmt || yFmt)(shown);
        },
      })),
    ],
    hooks: {
      setSelect: [(u) => {
        if (!onSelect || u.select.width < 3) return;
        const from = u.posToVal(u.select.left, 'x');
        const to = u.posToVal(u.select.left + u.select.width, 'x');
        u.setSelect({ width: 0, height: 0 }, false);
        onSelect(Math.floor(from), Math.ceil(to));
      }],
    },
  };
  const plot = new uPlot(opts, [x, ...data], box);
  sync.sub(plot);
  return plot;
}

// A horizontal bar split into parts: [{label, value, color}], with a legend of values.
export function splitBar(parent, parts, fmt, testid) {
  const total = parts.reduce((s, p) => s + (p.value || 0), 0);
  const wrap = document.createElement('div');
  wrap.className = 'splitbar';
  if (testid) wrap.dataset.testid = testid;
  const bar = document.createElement('div');
  bar.className = 'bar';
  bar.setAttribute('role', 'img');
  bar.setAttribute('aria-label', parts.map((p) => `${p.label} ${fmt(p.value)}`).join(', '));
  const legend = document.createElement('ul');
  for (const p of parts) {
    if (!p.value) continue;
    const seg = document.createElement('span');
    seg.style.width = `${(100 * p.value) / (total || 1)}%`;
    seg.style.background = p.color;
    seg.title = `${p.label}: ${fmt(p.value)}`;
    bar.append(seg);
    const li = document.createElement('li');
    li.innerHTML = `<i style="background:${p.color}"></i>${p.label} <b>${fmt(p.value)}</b>`;
    legend.append(li);
  }
  wrap.append(bar, legend);
  parent.append(wrap);
  return wrap;
}
