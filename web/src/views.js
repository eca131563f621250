// The dashboard's views. Each is `async (el, state, nav)`: it reads the API for the URL state's
// range and renders into `el`. Figures are formatted with format.js; cells the browser test
// checks against the API carry a data-testid.
import { apiGet, rangeParams } from './api.js';
import { timeChart, splitBar } from './charts.js';
import {
  CATEGORIES, categoryColor, esc, fmtBytes, fmtInt, fmtMs, fmtNs, fmtNum, fmtPct, fmtTime,
} from './format.js';

// ---- small DOM helpers ----
function section(el, title, note) {
  const s = document.createElement('section');
  s.innerHTML = `<h2>${esc(title)}</h2>${note ? `<p class="muted">${esc(note)}</p>` : ''}`;
  el.append(s);
  return s;
}

// rows: arrays of cells; a cell is text or {html} or {text, testid, cls}.
function table(parent, headers, rows, testid) {
  const t = document.createElement('table');
  if (testid) t.dataset.testid = testid;
  const head = headers.map((h) => `<th scope="col">${esc(h)}</th>`).join('');
  const body = rows.map((r) => `<tr>${r.map((c) => {
    if (c && typeof c === 'object') {
      const attrs = `${c.testid ? ` data-testid="${esc(c.testid)}"` : ''}${c.cls ? ` class="${c.cls}"` : ''}`;
      return `<td${attrs}>${c.html ?? esc(c.text)}</td>`;
    }
    return `<td>${esc(c)}</td>`;
  }).join('')}</tr>`).join('');
  t.innerHTML = `<thead><tr>${head}</tr></thead><tbody>${body}</tbody>`;
  const wrap = document.createElement('div');
  wrap.className = 'scroll';
  wrap.append(t);
  parent.append(wrap);
  return t;
}

function notice(el, text) {
  const p = document.createElement('p');
  p.className = 'notice';
  p.textContent = text;
  el.append(p);
}

// A profile of the range; null (with a notice) when the range holds no GPU activity.
async function profileOrNotice(el, params) {
  try {
    return await apiGet('/profile', params);
  } catch (e) {
    if (e.status === 404) {
      notice(el, `${e.message}${e.body?.range_holds?.length ? ` — the range holds: ${e.body.range_holds.join('; ')}` : ''}. Pick a wider range.`);
      return null;
    }
    throw e;
  }
}

// ---- overview ----
export async function overview(el, state) {
  const p = rangeParams(state);
  const [status, hosts, procs, devices, profile] = await Promise.all([
    apiGet('/status'), apiGet('/hosts', p), apiGet('/processes', p), apiGet('/devices', p),
    apiGet('/profile', p).catch(() => null),
  ]);
  const engine = profile?.engine;
  const s = section(el, 'Collectors', `agent ${status.version}, pid ${status.pid}, ${status.connected_processes} processes connected, ${fmtInt(status.windows_stored)} windows stored since start`);
  const c = status.collectors;
  table(s, ['collector', 'state', 'reason / detail'], [
    ['GPU metrics (NVML)', { text: c.nvml.state, testid: 'collector-nvml', cls: `state-${c.nvml.state}` },
      c.nvml.reason || c.nvml.devices.map((d) => `GPU ${d.index} ${d.name}`).join(', ')],
    ['engine metrics (scrape)', { text: c.scrape.state, testid: 'collector-scrape', cls: `state-${c.scrape.state}` },
      c.scrape.reason || `${c.scrape.engine ?? ''} ${c.scrape.url ?? ''}`],
    ['request spans (OTLP)', { text: c.otlp.state, testid: 'collector-otlp', cls: `state-${c.otlp.state}` },
      c.otlp.reason || `${fmtInt(c.otlp.spans_received)} spans received`],
  ], 'collectors');

  const h = section(el, 'Hosts');
  table(h, ['host', 'processes', 'windows', 'last seen'],
    hosts.hosts.map((x) => [x.hostname, { text: fmtInt(x.processes), testid: `host-processes-${x.hostname}` },
      fmtInt(x.windows), fmtTime(x.last_seen_unix_ns)]), 'hosts');

  const pr = section(el, 'Processes', engine ? `engine ${engine.engine}${engine.model_names?.length ? `, model ${engine.model_names.join(', ')}` : ''} (host-wide, from its metrics)` : 'no engine metrics in the range');
  table(pr, ['host', 'pid', 'rank', 'world', 'engine', 'model', 'profiling', 'CUPTI', 'windows', 'state'],
    procs.processes.map((x) => [
      x.hostname, { text: String(x.pid), testid: `proc-pid-${x.id}` }, { text: String(x.rank), testid: `proc-rank-${x.id}` },
      String(x.world_size), engine?.engine || '–', engine?.model_names?.join(', ') || '–',
      { text: x.profiling.on ? 'on' : `off: ${x.profiling.off_reason}`, cls: x.profiling.on ? 'state-on' : 'state-off' },
      x.profiling.cupti_release || '–', { text: fmtInt(x.windows), testid: `proc-windows-${x.id}` },
      x.ended_unix_ns ? 'ended' : 'running / lost',
    ]), 'processes');

  const g = section(el, 'GPUs', 'GPU work the profiled processes ran in the range, and the GPUs NVML sees');
  const names = Object.fromEntries((c.nvml.devices || []).map((d) => [d.index, d.name]));
  table(g, ['host', 'pid', 'rank', 'GPU', 'name', 'windows', 'kernels', 'busy'],
    devices.devices.map((d) => [d.hostname, String(d.pid), String(d.rank), String(d.device),
      names[d.device] || '–', fmtInt(d.windows), { text: fmtInt(d.kernels), testid: `dev-kernels-${d.pid}-${d.device}` },
      { text: fmtNs(d.busy_ns), testid: `dev-busy-${d.pid}-${d.device}` }]), 'devices');
  if (profile) {
    const d = section(el, 'Diagnosis (headline)');
    const f = profile.diagnosis.findings[0];
    d.insertAdjacentHTML('beforeend', `<p><span class="sev sev-${esc(f.severity)}">${esc(f.severity)}</span> <b data-testid="primary">${esc(f.id)}</b>: ${esc(f.summary)} — <a href="#${esc(linkTo(state, { view: 'detail' }))}">range detail</a></p>`);
  }
}

export function linkTo(state, changes) {
  const next = { ...state, ...changes };
  return new URLSearchParams(Object.entries(next).filter(([, v]) => v !== undefined && v !== '')).toString();
}

// ---- timeline ----
// The ranks' timelines on one absolute axis: per bin, ns by category and busy ns summed over the
// ranks, as % of the ranks' time (bin x ranks).
function kernelSeries(profile) {
  const ranks = profile.ranks.filter((r) => r.timeline?.bins?.length);
  if (!ranks.length) return null;
  const bin = ranks[0].timeline.bin_ns;
  let lo = Infinity, hi = -Infinity;
  for (const r of ranks) for (const b of r.timeline.bins) {
    const t = r.timeline.origin_ns + b.start_ns;
    lo = Math.min(lo, t); hi = Math.max(hi, t);
  }
  const n = Math.round((hi - lo) / bin) + 1;
  const x = Array.from({ length: n }, (_, i) => (lo + i * bin) / 1e9);
  const busy = new Array(n).fill(0);
  const cats = Object.fromEntries(CATEGORIES.map(([c]) => [c, new Array(n).fill(0)]));
  for (const r of ranks) for (const b of r.timeline.bins) {
    const i = Math.round((r.timeline.origin_ns + b.start_ns - lo) / bin);
    busy[i] += b.busy_ns;
    for (const [c, ns] of Object.entries(b.categories_ns || {})) if (cats[c]) cats[c][i] += ns;
  }
  const cap = bin * ranks.length / 100;
  return {
    x, bin,
    busy: busy.map((v) => v / cap),
    cats: Object.fromEntries(Object.entries(cats).map(([c, v]) => [c, v.map((ns) => ns / cap)])),
  };
}

const IDLE_CAUSES = ['sync', 'launch', 'allocation', 'dependency', 'queued', 'host_idle', 'unattributed'];
const IDLE_COLORS = ['#e15759', '#f28e2b', '#edc948', '#b07aa1', '#76b7b2', '#9c755f', '#8c8c8c'];
const meanOf = (m) => (m && m.samples ? m.sum / m.samples : null);

export async function timeline(el, state, nav) {
  const p = rangeParams(state);
  const [profile, series] = await Promise.all([profileOrNotice(el, p), apiGet('/timeseries', { ...p, steps: 120 })]);
  const onSelect = (from, to) => nav({ from, to, last: undefined });
  const xRange = profile ? [profile.range.from_unix_ns / 1e9, profile.range.to_unix_ns / 1e9] : undefined;
  const charts = document.createElement('div');
  charts.className = 'charts';
  el.append(charts);
  const pct = (v) => `${fmtNum(v, 0)}%`;
  if (profile) {
    const k = kernelSeries(profile);
    if (k) {
      const used = CATEGORIES.filter(([c]) => k.cats[c].some((v) => v > 0));
      timeChart(charts, {
        title: `GPU time by category (% of GPU time per ${fmtNs(k.bin)} bin${profile.ranks.length > 1 ? `, ${profile.ranks.length} GPUs` : ''})`,
        x: k.x, stacked: true, yFmt: pct, onSelect, xRange,
        series: used.map(([c, color]) => ({ label: c, color, values: k.cats[c], fmt: (v) => fmtPct(v) })),
      });
      timeChart(charts, {
        title: 'GPU busy and idle (%)', x: k.x, yFmt: pct, onSelect, xRange, yRange: [0, 100],
        series: [
          { label: 'busy', color: '#4e79a7', values: k.busy, fmt: fmtPct },
          { label: 'idle', color: '#e15759', values: k.busy.map((v) => 100 - v), fmt: fmtPct },
        ],
      });
    }
    // Idle by cause per step (/api/v1/timeseries), as % of one GPU's time (summed over GPUs).
    const sx = series.steps.map((st) => st.start_unix_ns / 1e9);
    const idleSeries = IDLE_CAUSES.map((c, i) => ({
      label: c, color: IDLE_COLORS[i],
      values: series.steps.map((st) => (st.idle_causes_ns ? (100 * st.idle_causes_ns[c]) / series.step_ns : null)),
      fmt: fmtPct,
    })).filter((x) => x.values.some((v) => v > 0));
    if (idleSeries.length) {
      timeChart(charts, { title: `GPU idle by cause (% of a GPU's time per ${fmtNs(series.step_ns)} step, summed over GPUs)`, x: sx, stacked: true, yFmt: pct, onSelect, xRange, series: idleSeries });
    }
    const sum = profile.summary;
    const idle = sum.idle_causes;
    const causes = IDLE_CAUSES;
    const colors = IDLE_COLORS;
    const idleBox = section(el, 'GPU idle by cause (whole range)', `GPU busy ${fmtPct(sum.temporal_breakdown.busy_pct)}, idle ${fmtPct(sum.temporal_breakdown.idle_pct)} of ${fmtNs(sum.temporal_breakdown.span_ns)} GPU time`);
    splitBar(idleBox, causes.map((c, i) => ({ label: c, value: idle[c]?.total_ns || 0, color: colors[i] })), fmtNs, 'idle-causes');
    el.append(idleBox);
  }
  const x = series.steps.map((s) => s.start_unix_ns / 1e9);
  const eng = series.steps.map((s) => s.engine?.derived || null);
  const has = (key) => eng.some((d) => d && d[key] != null);
  const col = (key, f = (v) => v) => eng.map((d) => (d && d[key] != null ? f(d[key]) : null));
  const tel = document.createElement('div');
  tel.className = 'charts';
  el.append(tel);
  if (has('requests_finished_per_s')) {
    timeChart(tel, { title: 'Requests (finished per s) and queue', x, onSelect, xRange, yFmt: (v) => fmtNum(v, 1),
      series: [
        { label: 'finished/s', color: '#4e79a7', values: col('requests_finished_per_s') },
        { label: 'running', color: '#59a14f', values: col('running_requests_mean') },
        { label: 'waiting', color: '#e15759', values: col('waiting_requests_mean') },
      ] });
  }
  const lat = [['ttft', '#f28e2b'], ['inter_token', '#76b7b2'], ['e2e', '#b07aa1']]
    .flatMap(([st, color]) => ['p50', 'p99'].filter((q) => has(`${st}_${q}_s`)).map((q) => ({
      label: `${st} ${q}`, color, values: col(`${st}_${q}_s`, (v) => v * 1e3), fmt: (v) => `${fmtNum(v, 1)} ms`,
    })));
  if (lat.length) timeChart(tel, { title: 'Latency percentiles (ms): TTFT, inter-token, end-to-end', x, onSelect, xRange, series: lat, yFmt: (v) => fmtNum(v, 0) });

  // GPU metrics: one series per GPU and metric, from each step's merged NVML window.
  const gpus = new Map();
  series.steps.forEach((s) => (s.gpu_metrics?.devices || []).forEach((d) => gpus.set(d.index, d.name)));
  const gpuPalette = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#b07aa1', '#76b7b2', '#edc948', '#9c755f'];
  const metric = (idx, name, f = (v) => v) => series.steps.map((s) => {
    const d = s.gpu_metrics?.devices?.find((g) => g.index === idx);
    const v = meanOf(d?.metrics?.[name]);
    return v == null ? null : f(v);
  });
  const throttle = (idx) => series.steps.map((s) => {
    const d = s.gpu_metrics?.devices?.find((g) => g.index === idx);
    if (!d) return null;
    let worst = 0;
    for (const [r, t] of Object.entries(d.throttle || {})) if (r !== 'gpu_idle') worst = Math.max(worst, t.fraction * 100);
    return worst;
  });
  const perGpu = (names, f) => [...gpus.keys()].flatMap((idx, gi) => names.map(([m, label], mi) => ({
    label: `GPU${idx} ${label}`, color: gpuPalette[(gi * names.length + mi) % gpuPalette.length], values: metric(idx, m, f),
  }))).filter((s) => s.values.some((v) => v != null));
  const gpuCharts = [
    ['SM activity, occupancy, tensor (%)', perGpu([['gpm_sm_active_pct', 'SM active'], ['gpm_sm_occupancy_pct', 'occupancy'], ['gpm_tensor_active_pct', 'tensor'], ['gpu_util_pct', 'util']]), pct],
    ['DRAM bandwidth (% of peak)', perGpu([['gpm_dram_bw_util_pct', 'DRAM bw']]), pct],
    ['Power (W)', perGpu([['power_w', 'power']]), (v) => fmtNum(v, 0)],
    ['SM clock (MHz)', perGpu([['sm_clock_mhz', 'SM clock']]), (v) => fmtNum(v, 0)],
    ['NVLink and PCIe (bytes/s)', perGpu([['nvlink_tx_bytes_per_s', 'NVLink tx'], ['nvlink_rx_bytes_per_s', 'NVLink rx'], ['pcie_tx_bytes_per_s', 'PCIe tx'], ['pcie_rx_bytes_per_s', 'PCIe rx']]), fmtBytes],
    ['Clock throttling (% of samples, worst reason)', [...gpus.keys()].map((idx, gi) => ({ label: `GPU${idx}`, color: gpuPalette[gi % gpuPalette.length], values: throttle(idx) })), pct],
  ];
  for (const [title, s, yFmt] of gpuCharts) if (s.length) timeChart(tel, { title, x, series: s, yFmt, onSelect, xRange });
  if (!gpus.size && !eng.some(Boolean)) notice(el, 'No GPU or engine metrics in the range (NVML or the engine\'s metrics endpoint were not collected).');
}

// ---- range detail ----
function sumRanks(profile, key) {
  const out = {};
  for (const r of profile.ranks) for (const [k, v] of Object.entries(r[key] || {})) {
    out[k] ??= {};
    for (const [f, x] of Object.entries(v)) if (typeof x === 'number') out[k][f] = (out[k][f] || 0) + x;
  }
  return out;
}

export async function detail(el, state) {
  const profile = await profileOrNotice(el, rangeParams(state));
  if (!profile) return;
  const sum = profile.summary;
  const d = section(el, 'Diagnosis', `primary verdict: ${profile.diagnosis.primary}`);
  profile.diagnosis.findings.forEach((f, i) => {
    const box = document.createElement('article');
    box.className = 'finding';
    box.dataset.testid = `finding-${f.id}`;
    box.innerHTML = `<h3><span class="sev sev-${esc(f.severity)}">${esc(f.severity)}</span> ${i + 1}. ${esc(f.id)}
      <small>confidence ${fmtNum(f.confidence)}, <span data-testid="stake-${esc(f.id)}">${fmtPct(f.score * 100)}</span> of time at stake${f.rank >= 0 ? `, rank ${f.rank}` : ''}</small></h3>
      <p>${esc(f.summary)}</p>`;
    const ev = document.createElement('div');
    table(ev, ['evidence', 'value'], f.evidence.map((e) => [e.name, e.unit === 'count' ? fmtInt(e.value) : `${fmtNum(e.value)} ${e.unit}`]));
    box.append(ev);
    if (f.fixes.length) box.insertAdjacentHTML('beforeend', `<ul class="fixes">${f.fixes.map((x) => `<li>${esc(x)}</li>`).join('')}</ul>`);
    d.append(box);
  });

  const c = section(el, 'GPU time by category', `${fmtInt(sum.kernel_count)} kernels, ${fmtNs(sum.kernel_time_ns)} kernel time; GPU busy ${fmtPct(sum.temporal_breakdown.busy_pct)}`);
  splitBar(c, CATEGORIES.map(([k, color]) => ({ label: k, value: sum.categories[k]?.time_ns || 0, color })), fmtNs, 'category-bar');
  table(c, ['category', 'time', 'kernels', 'share'], CATEGORIES.filter(([k]) => sum.categories[k]?.time_ns > 0)
    .map(([k]) => [k, fmtNs(sum.categories[k].time_ns), fmtInt(sum.categories[k].count), { text: fmtPct(sum.categories[k].pct), testid: `cat-${k}` }]), 'categories');
  const subs = Object.entries(sum.subcategories || {}).slice(0, 25);
  if (subs.length) table(c, ['sub-category', 'time', 'kernels', 'share'], subs.map(([k, v]) => [k, fmtNs(v.time_ns), fmtInt(v.count), fmtPct(v.pct)]), 'subcategories');

  // Forward phases: the GPU time of the steps (GPU work between the host's turns) by the
  // attention they ran; only when the range has whole steps (docs/report-schema.md `phases`).
  const ph = sum.phases;
  if (ph?.list?.length) {
    const f = section(el, 'Forward phases (prefill vs decode)', `${fmtInt(ph.list.reduce((n, x) => n + x.steps, 0))} steps; outside any counted step ${fmtNs(ph.outside_ns)} (${fmtPct(ph.outside_pct)})`);
    const colors = { prefill: '#4e79a7', decode: '#f28e2b', mixed: '#b07aa1', unknown: '#8c8c8c' };
    splitBar(f, [...ph.list.map((x) => ({ label: x.phase, value: x.gpu_time_ns, color: colors[x.phase] || '#888' })),
      { label: 'outside', value: ph.outside_ns, color: '#d0d0d0' }], fmtNs, 'phase-bar');
    const top = (x) => Object.entries(x.categories || {}).slice(0, 3).map(([c, v]) => `${c} ${fmtPct(v.pct)}`).join(', ');
    table(f, ['phase', 'steps', 'mean step', 'GPU time', 'share', 'top categories'], [
      ...ph.list.map((x) => [x.phase, { text: fmtInt(x.steps), testid: `phase-steps-${x.phase}` }, fmtNs(x.step_mean_ns),
        fmtNs(x.gpu_time_ns), { text: fmtPct(x.pct), testid: `phase-${x.phase}` }, top(x)]),
      ['outside', '', '', fmtNs(ph.outside_ns), { text: fmtPct(ph.outside_pct), testid: 'phase-outside' }, ''],
    ], 'phases');
  }

  const k = section(el, 'Top kernels', 'by total time over all GPUs; the tail is every kernel not listed');
  const rows = sum.top_kernels.map((x, i) => [
    { html: `<span class="swatch" style="background:${categoryColor[x.category] || '#888'}"></span>${esc(x.display_name || x.name)}`, cls: 'name' },
    x.subcategory || x.category, fmtInt(x.count), { text: fmtNs(x.total_ns), testid: `kernel-total-${i}` }, fmtNs(x.mean_ns), fmtNs(x.max_ns),
    { html: `<span class="pctbar"><span style="width:${Math.min(100, x.pct)}%"></span></span>${fmtPct(x.pct)}` },
  ]);
  const o = sum.other_kernels;
  rows.push([{ text: `tail: ${fmtInt(o.distinct_names)} other kernels`, cls: 'name' }, '', fmtInt(o.count), { text: fmtNs(o.total_ns), testid: 'kernel-tail' }, '', '', fmtPct(o.pct)]);
  table(k, ['kernel', 'category', 'count', 'total', 'mean', 'max', 'share'], rows, 'top-kernels');

  const syncs = sumRanks(profile, 'sync_waits');
  const s = section(el, 'Host sync waits');
  const waited = {};
  for (const r of profile.ranks) for (const [type, v] of Object.entries(r.sync_waits)) for (const w of v.waited_on || []) {
    const key = `${type}: ${w.display_name || w.name}`;
    waited[key] = (waited[key] || 0) + w.wait_ns;
  }
  table(s, ['type', 'waits', 'total', 'max'], Object.entries(syncs).filter(([, v]) => v.count > 0)
    .map(([t, v]) => [t, fmtInt(v.count), { text: fmtNs(v.total_ns), testid: `sync-${t}` }, fmtNs(v.max_ns)]), 'syncs');
  const top = Object.entries(waited).sort((a, b) => b[1] - a[1]).slice(0, 8);
  if (top.length) table(s, ['waited on', 'wait'], top.map(([n, ns]) => [{ text: n, cls: 'name' }, fmtNs(ns)]));

  const t = section(el, 'Transfers and allocations');
  const mt = sumRanks(profile, 'memory_transfers');
  table(t, ['direction', 'copies', 'bytes', 'time', 'bandwidth', 'pageable'], Object.entries(mt).filter(([, v]) => v.count > 0)
    .map(([dir, v]) => [dir, fmtInt(v.count), fmtBytes(v.bytes), fmtNs(v.time_ns), v.time_ns ? `${fmtNum(v.bytes / v.time_ns)} GB/s` : '–', fmtInt(v.pageable_count)]), 'transfers');
  const al = {};
  for (const r of profile.ranks) for (const [f, v] of Object.entries(r.allocations)) al[f] = f.endsWith('max_ns') ? Math.max(al[f] || 0, v) : (al[f] || 0) + v;
  table(t, ['malloc calls', 'malloc time', 'bytes', 'free calls', 'free time', 'slow (>1 ms)'],
    [[fmtInt(al.malloc_calls), fmtNs(al.malloc_total_ns), fmtBytes(al.malloc_bytes), fmtInt(al.free_calls), fmtNs(al.free_total_ns), `${fmtInt(al.slow_calls)} (${fmtNs(al.slow_total_ns)})`]], 'allocations');

  const cm = section(el, 'Communication and rank imbalance',
    `communication ${fmtNs(sum.communication_ns)}, ${fmtPct(sum.comm_compute_overlap_pct)} overlapped with compute`);
  const rc = profile.rank_comparison;
  table(cm, ['rank', 'GPU', 'busy', 'compute', 'communication', 'busy %'], rc.ranks.map((r, i) => [String(r.rank), String(r.device), fmtNs(r.busy_ns), fmtNs(r.compute_ns), fmtNs(r.communication_ns), { text: fmtPct(r.busy_pct), testid: `rank-busy-${i}` }]), 'ranks');
  cm.insertAdjacentHTML('beforeend', `<p>busy imbalance ${fmtNum(rc.busy_imbalance, 3)}, communication imbalance ${fmtNum(rc.communication_imbalance, 3)}${rc.straggler_rank != null ? `, straggler rank <b>${rc.straggler_rank}</b> (+${fmtNs(rc.straggler_excess_compute_ns)} compute)` : ''}</p>`);
}
