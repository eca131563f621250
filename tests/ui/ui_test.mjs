// The dashboard in Debian's headless Chromium (playwright-core, pinned by package-lock.json),
// against a running agent (ui_test.py starts it). Checks, per view, that the figures shown equal
// the API's (formatted by the page's own web/src/format.js), that range selection (presets, a
// drag on a chart, the keyboard) and the compare view work, that no console error or page error
// occurs, in light and dark; saves a screenshot per view and measures the first paint and the
// render of a 24 h range. Prints one line per check; exit 1 on any failure.
//
//   node ui_test.mjs --url http://127.0.0.1:PORT --out DIR --chromium /usr/bin/chromium
//                    --history-end UNIX_S --history-hours H
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { fmtInt, fmtNs, fmtPct, fmtNum } from '../../web/src/format.js';

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => {
  if (a.startsWith('--')) acc.push([a.slice(2), all[i + 1]]);
  return acc;
}, []));
const BASE = args.url;
const OUT = args.out;
const FIRST_PAINT_BUDGET_MS = 1000;
const RANGE_24H_BUDGET_MS = 2000;
// The speed budgets are the dashboard's targets: a measurement (docs/benchmarks.md runs this test with
// INFERSCOPE_UI_BUDGETS=1), not a pass/fail of the functional test, whose timings follow the
// machine's load. Without --enforce-budgets 1 they are measured, printed and recorded only.
const ENFORCE_BUDGETS = args['enforce-budgets'] === '1';
const failures = [];
const T0 = Date.now();
const check = (ok, what) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} [${((Date.now() - T0) / 1e3).toFixed(1)} s] ${what}`);
  if (!ok) failures.push(what);
};
const budget = (ok, what) => {
  if (ENFORCE_BUDGETS) return check(ok, what);
  console.log(`${ok ? 'met ' : 'OVER'} [${((Date.now() - T0) / 1e3).toFixed(1)} s] ${what} (budget measured, not enforced)`);
};
// The test's own reads carry the agent's token; the browser holds only its session cookie.
const api = async (p, params = {}) => {
  const q = new URLSearchParams(params).toString();
  const r = await fetch(`${BASE}/api/v1${p}${q ? `?${q}` : ''}`,
                        { headers: { authorization: `Bearer ${args.token}` } });
  return r.json();
};

const browser = await chromium.launch({ executablePath: args.chromium, args: ['--no-sandbox', '--disable-gpu'] });
const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
{
  // Sign-in (docs/agent.md, "Access"): before it the page says how; the one-time link sets an
  // HttpOnly, SameSite=Strict cookie and leads to /ui/; the link works once.
  const signin = await context.newPage();
  let r = await signin.goto(`${BASE}/ui/`);
  check(r.status() === 401 && /inferscope ui/.test(await signin.content()),
        `before sign-in /ui/ is 401 and says how to sign in (HTTP ${r.status()})`);
  r = await signin.goto(args.login);
  check(r.status() === 200 && new URL(signin.url()).pathname === '/ui/',
        `the one-time link signs in and lands on /ui/ (${signin.url()}, HTTP ${r.status()})`);
  const cookies = await context.cookies(BASE);
  const session = cookies.find((c) => c.name.startsWith('inferscope_session'));
  check(session && session.httpOnly && session.sameSite === 'Strict' && !session.value.includes(args.token),
        `the session cookie is HttpOnly, SameSite=Strict and not the token (${JSON.stringify(session)})`);
  r = await signin.goto(args.login);
  check(r.status() === 401, `the link works once (second use: HTTP ${r.status()})`);
  check(!(await signin.evaluate(() => document.cookie)).includes('inferscope_session'),
        'the page\'s scripts cannot read the session cookie');
  await signin.close();
}
const page = await context.newPage();
const consoleErrors = [];
page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
page.on('pageerror', (e) => consoleErrors.push(`pageerror: ${e.message}`));
page.on('response', (r) => { if (r.status() >= 400) consoleErrors.push(`HTTP ${r.status()} ${r.url()}`); });

// Loads `hash` and waits for the view to finish rendering; returns its render time (ms).
// Every hash gets a fresh `n` so it always navigates (and re-renders).
let navs = 0;
async function show(hash, view) {
  const before = await page.evaluate(() => window.__inferscope?.renders || 0).catch(() => 0);
  await page.goto(`${BASE}/ui/#${hash}&n=${++navs}`);
  await page.waitForFunction(([v, n]) => window.__inferscope && window.__inferscope.view === v &&
    window.__inferscope.renders > n &&
    document.querySelector('main').getAttribute('aria-busy') === 'false', [view, before], { timeout: 30000 });
  const ms = await page.evaluate(() => window.__inferscope.renderMs);
  console.log(`     [${((Date.now() - T0) / 1e3).toFixed(1)} s] ${view} rendered in ${ms.toFixed(0)} ms`);
  return ms;
}
// Every data-testid cell of the view, read in one round trip (each costs ~0.3 s on a loaded
// machine); `text(id)` then looks up the last view read.
let cells = {};
const readCells = async () => {
  cells = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll('[data-testid]')]
    .map((e) => [e.dataset.testid, e.textContent.trim()])));
};
const text = async (testid) => cells[testid];
// Viewport screenshots (a full page of canvases costs seconds on a loaded 2-core machine), except
// where the whole page is wanted (the README's).
const shot = (name, fullPage = false) => page.screenshot({ path: path.join(OUT, `${name}.png`), fullPage });

const timings = {};
try {
  // ---- first paint: a fresh load of the page ----
  await page.goto(`${BASE}/ui/#view=overview&last=15m`);
  // goto returns at the load event, which can come before the first paint's entry is recorded.
  await page.waitForFunction(() => performance.getEntriesByName('first-contentful-paint').length ||
    performance.getEntriesByName('first-paint').length, null, { timeout: 10000 }).catch(() => {});
  const paint = await page.evaluate(() => {
    const e = performance.getEntriesByName('first-contentful-paint')[0] || performance.getEntriesByName('first-paint')[0];
    return e ? e.startTime : null;
  });
  timings.first_paint_ms = paint;
  check(paint != null, 'first paint measured');
  budget(paint != null && paint <= FIRST_PAINT_BUDGET_MS, `first paint ${paint?.toFixed(0)} ms <= ${FIRST_PAINT_BUDGET_MS} ms`);

  // The views are checked on a fixed range (a preset moves with the clock): the last 10 minutes of
  // the history and the live part after it.
  const histEnd = +args['history-end'];
  // It ends 3 s ago: the agent goes on storing 1 s telemetry windows (fake NVML, scrapes), and
  // every row starting before then is stored, so the page and the API see the same rows.
  // It starts on the stored windows' 10 s grid, so no window straddles its start.
  const R = { from: String(Math.floor(histEnd / 10) * 10 - 600), to: String(Math.floor(Date.now() / 1e3) - 3) };
  const RH = `from=${R.from}&to=${R.to}`;
  // ---- overview ----
  await show(`view=overview&${RH}`, 'overview');
  await readCells();
  await shot('overview');
  const status = await api('/status');
  const procs = await api('/processes', R);
  const devices = await api('/devices', R);
  check(procs.processes.length >= 3, `overview: API lists ${procs.processes.length} processes (2 stored + the replay)`);
  for (const p of procs.processes) {
    check(await text(`proc-pid-${p.id}`) === String(p.pid), `overview: process ${p.id} pid ${p.pid}`);
    check(await text(`proc-rank-${p.id}`) === String(p.rank), `overview: process ${p.id} rank ${p.rank}`);
    check(await text(`proc-windows-${p.id}`) === fmtInt(p.windows), `overview: process ${p.id} windows ${fmtInt(p.windows)}`);
  }
  for (const d of devices.devices) {
    check(await text(`dev-kernels-${d.pid}-${d.device}`) === fmtInt(d.kernels), `overview: pid ${d.pid} GPU ${d.device} kernels ${fmtInt(d.kernels)}`);
    check(await text(`dev-busy-${d.pid}-${d.device}`) === fmtNs(d.busy_ns), `overview: pid ${d.pid} GPU ${d.device} busy ${fmtNs(d.busy_ns)}`);
  }
  for (const c of ['nvml', 'scrape', 'otlp'])
    check(await text(`collector-${c}`) === status.collectors[c].state, `overview: collector ${c} ${status.collectors[c].state}`);
  check(status.collectors.nvml.state === 'on' && status.collectors.scrape.state === 'on', 'overview: fake NVML and engine collectors on');
  const profile15 = await api('/profile', R);
  check(await text('primary') === profile15.diagnosis.primary, `overview: primary verdict ${profile15.diagnosis.primary}`);

  // ---- timeline ----
  await show(`view=timeline&${RH}`, 'timeline');
  const titles = await page.locator('figure.chart figcaption').allTextContents();
  for (const t of ['GPU time by category', 'GPU busy and idle', 'GPU idle by cause', 'Requests', 'Latency percentiles', 'SM activity', 'DRAM bandwidth', 'Power', 'SM clock', 'NVLink and PCIe', 'Clock throttling'])
    check(titles.some((x) => x.startsWith(t)), `timeline: chart '${t}'`);
  const busyNote = await page.locator('section', { hasText: 'GPU idle by cause' }).locator('p.muted').textContent();
  check(busyNote.includes(`GPU busy ${fmtPct(profile15.summary.temporal_breakdown.busy_pct)}`),
    `timeline: busy ${fmtPct(profile15.summary.temporal_breakdown.busy_pct)} as the API's (${busyNote})`);
  // The stacked chart's data: the category series sum to the busy line's kernel time per bin is
  // not exact (concurrent kernels), but every category the API's range holds is drawn.
  const used = Object.entries(profile15.summary.categories).filter(([, v]) => v.time_ns > 0).map(([k]) => k);
  const legend = await page.locator('figure.chart').first().locator('.u-legend .u-label').allTextContents();
  for (const c of used) check(legend.includes(c), `timeline: category ${c} in the stacked chart`);
  const series = await api('/timeseries', { ...R, steps: 120 });
  check(series.steps.some((s) => s.gpu_metrics?.devices?.length === 2), 'timeseries: steps with the 2 fake GPUs');
  // The steps' idle causes add up to the profile's (windows inside the range count whole).
  const idleSum = series.steps.reduce((t, s) => t + Object.values(s.idle_causes_ns || {}).reduce((a, b) => a + b, 0), 0);
  const idleWant = Object.entries(profile15.summary.idle_causes).reduce((t, [k, v]) => t + (k === 'intervals' ? 0 : v.total_ns), 0);
  check(Math.abs(idleSum - idleWant) <= 1e-3 * idleWant + 1000, `timeseries: idle causes over the steps ${fmtNs(idleSum)} = the profile's ${fmtNs(idleWant)}`);
  check(series.steps.some((s) => s.engine?.derived?.requests_finished_per_s > 0), 'timeseries: steps with engine request rates');
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.waitForTimeout(100);
  await shot('timeline-dark');
  await page.emulateMedia({ colorScheme: 'light' });

  // The live part alone (the README's screenshot): 1 s bins of GPU time, requests and GPU metrics.
  await show(`view=timeline&from=${histEnd + 100}&to=${R.to}`, 'timeline');
  await shot('timeline-live', true);
  await show(`view=timeline&${RH}`, 'timeline');

  // ---- range selection: a drag on the first chart narrows the range ----
  // uPlot lays its plot area out a frame after the view reports it rendered, and the view may
  // redraw its charts meanwhile (a range ending now refreshes): a drag on a chart being replaced
  // is lost. The box is asked for until there is one, and the drag repeated (3 tries) until the
  // range changes.
  const hashBefore = await page.evaluate(() => location.hash);
  let dragged = false;
  for (let attempt = 0; attempt < 3 && !dragged; ++attempt) {
    const over = page.locator('figure.chart').first().locator('.u-over');
    let box = null;
    for (let i = 0; i < 50 && !box; ++i) {
      await over.waitFor({ state: 'visible', timeout: 10000 });
      box = await over.boundingBox();
      if (!box) await page.waitForTimeout(100);
    }
    if (!box) throw new Error('the first chart never got a plot area');
    await page.mouse.move(box.x + box.width * 0.55, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.75, box.y + box.height / 2, { steps: 8 });
    await page.mouse.up();
    dragged = await page.waitForFunction((h) => location.hash !== h && /from=\d+/.test(location.hash),
      hashBefore, { timeout: 4000 }).then(() => true, () => false);
  }
  check(dragged, 'range selection: a drag on the first chart changes the range');
  await page.waitForFunction(() => document.querySelector('main').getAttribute('aria-busy') === 'false' && window.__inferscope.view === 'timeline');
  const sel = Object.fromEntries(new URLSearchParams((await page.evaluate(() => location.hash)).slice(1)));
  check(sel.from && sel.to && +sel.to > +sel.from && +sel.from >= +R.from - 1 && +sel.to <= +R.to + 1,
    `range selection: drag gave from=${sel.from} to=${sel.to} inside the range shown`);
  const selBusy = (await api('/profile', { from: sel.from, to: sel.to })).summary.temporal_breakdown.busy_pct;
  const selNote = await page.locator('section', { hasText: 'GPU idle by cause' }).locator('p.muted').textContent();
  check(selNote.includes(`GPU busy ${fmtPct(selBusy)}`), `range selection: the view shows the selection's busy ${fmtPct(selBusy)} (${selNote})`);
  check(!sel.last, 'range selection: the preset is replaced by from/to in the URL');
  const label = await page.locator('#range-label').textContent();
  check(label.includes('→'), `range selection: label shows the selected range (${label})`);

  // ---- one GPU: the device filter narrows the kernel timeline and the GPU metrics ----
  await show(`view=timeline&${RH}&device=1`, 'timeline');
  const p1 = await api('/profile', { ...R, device: '1' });
  const one = await page.evaluate(() => ({
    device: document.getElementById('device').value,
    note: [...document.querySelectorAll('section')].find((x) => x.textContent.includes('GPU idle by cause'))?.querySelector('p.muted')?.textContent,
  }));
  const powerLabels = (await page.locator('figure.chart', { hasText: 'Power (W)' }).locator('.u-legend .u-label').allTextContents())
    .filter((l) => l !== 'time');
  check(one.device === '1', 'one GPU: the selector shows GPU 1');
  check(p1.ranks.length > 0 && p1.ranks.every((r) => r.device === 1), `one GPU: the API's ranks are GPU 1's (${p1.ranks.length})`);
  check(one.note?.includes(`GPU busy ${fmtPct(p1.summary.temporal_breakdown.busy_pct)}`), `one GPU: busy ${fmtPct(p1.summary.temporal_breakdown.busy_pct)} as the API's (${one.note})`);
  check(powerLabels.length === 1 && powerLabels[0].startsWith('GPU1'), `one GPU: power of GPU 1 only (${powerLabels.join(', ')})`);

  // ---- range detail ----
  await show(`view=detail&${RH}`, 'detail');
  await readCells();
  for (const [k, v] of Object.entries(profile15.summary.categories))
    if (v.time_ns > 0) check(await text(`cat-${k}`) === fmtPct(v.pct), `detail: category ${k} ${fmtPct(v.pct)}`);
  const tk = profile15.summary.top_kernels;
  for (let i = 0; i < Math.min(tk.length, 5); i++)
    check(await text(`kernel-total-${i}`) === fmtNs(tk[i].total_ns), `detail: top kernel ${i} total ${fmtNs(tk[i].total_ns)}`);
  check(await text('kernel-tail') === fmtNs(profile15.summary.other_kernels.total_ns), `detail: kernel tail ${fmtNs(profile15.summary.other_kernels.total_ns)}`);
  // Forward phases: the vLLM example's windows have prefill and decode steps.
  const ph = profile15.summary.phases;
  check(ph.list.some((x) => x.phase === 'decode') && ph.list.some((x) => x.phase === 'prefill'),
    `detail: the API has prefill and decode steps (${ph.list.map((x) => x.phase).join(', ')})`);
  for (const x of ph.list) {
    check(await text(`phase-${x.phase}`) === fmtPct(x.pct), `detail: phase ${x.phase} ${fmtPct(x.pct)}`);
    check(await text(`phase-steps-${x.phase}`) === fmtInt(x.steps), `detail: phase ${x.phase} ${fmtInt(x.steps)} steps`);
  }
  check(await text('phase-outside') === fmtPct(ph.outside_pct), `detail: phase outside ${fmtPct(ph.outside_pct)}`);
  check('phase-bar' in cells, 'detail: the phase split bar');
  for (const f of profile15.diagnosis.findings) {
    check(`finding-${f.id}` in cells, `detail: finding ${f.id}`);
    check(await text(`stake-${f.id}`) === fmtPct(f.score * 100), `detail: finding ${f.id} stake ${fmtPct(f.score * 100)}`);
  }
  for (const [i, r] of profile15.rank_comparison.ranks.entries())
    check(await text(`rank-busy-${i}`) === fmtPct(r.busy_pct), `detail: rank ${r.rank} GPU ${r.device} busy ${fmtPct(r.busy_pct)}`);
  await shot('detail');

  // ---- compare: the live replay (the vLLM example) against the last 30 min of the history (the
  // scenario pair's candidate): other kernels, so significant changes to highlight ----
  const a = { from: String(histEnd + 30), to: R.to }, b = { b_from: String(histEnd - 1800), b_to: String(histEnd) };
  await show(`view=compare&from=${a.from}&to=${a.to}&b_from=${b.b_from}&b_to=${b.b_to}`, 'compare');
  const cmp = await api('/compare', { ...a, ...b });
  const sig = cmp.comparison.changes.filter((m) => m.significant);
  check(sig.length > 0, `compare: the API finds ${sig.length} significant changes`);
  check(cmp.comparison.changes.some((m) => m.status === 'regression'), 'compare: some changes are regressions');
  const summary = await page.locator('[data-testid="compare-summary"] p.muted').textContent();
  check(summary.includes(`${cmp.comparison.regressions} regressions`) && summary.includes(cmp.comparison.baseline.slices),
    `compare: the summary names ${cmp.comparison.regressions} regressions and the slices (${summary})`);
  const rows = await page.locator('[data-testid="compare-changes"] tbody tr').evaluateAll((trs) => trs.map((t) => ({ key: t.dataset.key, cls: t.className })));
  check(rows.length === cmp.comparison.changes.length, `compare: ${rows.length} rows = the API's ${cmp.comparison.changes.length} changes`);
  for (const m of cmp.comparison.changes) {
    const row = rows.find((r) => r.key === m.key);
    // The diff's status (regression, improvement, explained), else `significant` when significant.
    const want = m.status !== 'not_significant' ? m.status : m.significant ? 'significant' : '';
    if (m.significant || row?.cls) check(row && row.cls === want, `compare: ${m.key} highlighted as '${want}'`);
  }
  await shot('compare');
  // The form picks another baseline (keyboard: fill and submit).
  await page.fill('input[name="b_from"]', new Date((histEnd - 3600) * 1e3).toISOString().slice(0, 19));
  await page.press('input[name="b_to"]', 'Enter');
  await page.waitForFunction((v) => location.hash.includes(`b_from=${v}`), String(histEnd - 3600));
  check(true, 'compare: the baseline form sets b_from in the URL');

  // ---- cost ----
  await show(`view=cost&${RH}&price=2.5`, 'cost');
  await readCells();
  const costApi = await api('/profile', { ...R, gpu_hourly_cost: '2.5' });
  check(costApi.cost && await text('cost-hour') === `$${fmtNum(costApi.cost.usd_per_hour, 2)}`, `cost: USD per hour $${fmtNum(costApi.cost?.usd_per_hour, 2)}`);
  check(await text('cost-gpus') === String(costApi.cost?.gpus), `cost: ${costApi.cost?.gpus} GPUs`);
  await shot('cost');

  // ---- keyboard: Tab to the 24 h preset and press Enter ----
  await show(`view=overview&${RH}`, 'overview');
  let reached = false;
  for (let i = 0; i < 12 && !reached; i++) {
    await page.keyboard.press('Tab');
    reached = await page.evaluate(() => document.activeElement?.dataset?.last === '24h');
  }
  check(reached, 'keyboard: Tab reaches the 24 h preset');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => location.hash.includes('last=24h') && window.__inferscope.view === 'overview' &&
    document.querySelector('main').getAttribute('aria-busy') === 'false' && document.querySelector('[aria-pressed="true"]')?.dataset.last === '24h', null, { timeout: 30000 });
  check(true, 'keyboard: Enter on the preset selects 24 h');

  // ---- 24 h range: the timeline of the whole history, timed ----
  const r24 = [];
  for (let i = 0; i < 5; i++) {
    const t0 = Date.now();
    const ms = await show(`view=timeline&last=24h&n=${i}`, 'timeline');
    r24.push({ render_ms: ms, wall_ms: Date.now() - t0 });
  }
  // The median of 5 loads: a load can lose the 2 cores to the other processes of a loaded
  // machine for a second or more; every load is recorded.
  const median = r24.map((r) => r.render_ms).sort((x, y) => x - y)[2];
  timings.range_24h_render_ms = r24.map((r) => Math.round(r.render_ms));
  timings.range_24h_wall_ms = r24.map((r) => r.wall_ms);
  budget(median <= RANGE_24H_BUDGET_MS, `24 h timeline rendered in ${median.toFixed(0)} ms (median of ${timings.range_24h_render_ms.join(', ')}) <= ${RANGE_24H_BUDGET_MS} ms`);
  const charts24 = await page.locator('figure.chart').count();
  check(charts24 >= 2, `24 h timeline: ${charts24} charts`);
  await shot('timeline-24h');

  check(consoleErrors.length === 0, `no console errors${consoleErrors.length ? `: ${consoleErrors.slice(0, 5).join(' | ')}` : ''}`);
} catch (e) {
  check(false, `exception: ${e.stack || e}`);
} finally {
  // Chromium's shutdown can take many seconds on a loaded machine: wait at most 3 s (the
  // process exit below kills it).
  await Promise.race([browser.close(), new Promise((r) => setTimeout(r, 3000))]);
}
fs.writeFileSync(path.join(OUT, 'timings.json'), `${JSON.stringify(timings, null, 2)}\n`);
console.log(`timings: ${JSON.stringify(timings)}; screenshots in ${OUT}`);
console.log(failures.length ? `${failures.length} checks failed` : 'all checks passed');
process.exit(failures.length ? 1 : 0);
