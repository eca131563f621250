// Compare and cost views.
import { apiGet, rangeParams } from './api.js';
import { esc, fmtNs, fmtNum, fmtPct, fmtTime } from './format.js';

function section(el, title, note) {
  const s = document.createElement('section');
  s.innerHTML = `<h2>${esc(title)}</h2>${note ? `<p class="muted">${esc(note)}</p>` : ''}`;
  el.append(s);
  return s;
}

// Range B of the URL state (b_from/b_to, else b_last), defaulting to the period of the same
// length just before range A.
export function rangeB(state, profileA) {
  if (state.b_from && state.b_to) return { from: state.b_from, to: state.b_to };
  const a0 = Math.floor(profileA.range.from_unix_ns / 1e9), a1 = Math.ceil(profileA.range.to_unix_ns / 1e9);
  return { from: a0 - (a1 - a0), to: a0 };
}

function rangeForm(el, state, b, nav) {
  const f = document.createElement('form');
  f.className = 'rangeform';
  const local = (s) => new Date(s * 1e3).toISOString().slice(0, 19);
  f.innerHTML = `<fieldset><legend>Baseline (B) range, UTC</legend>
    <label>from <input name="b_from" type="datetime-local" step="1" value="${local(b.from)}"></label>
    <label>to <input name="b_to" type="datetime-local" step="1" value="${local(b.to)}"></label>
    <button type="submit">Compare</button></fieldset>`;
  f.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const sec = (v) => Math.round(Date.parse(`${v}Z`) / 1e3);
    nav({ b_from: sec(f.b_from.value), b_to: sec(f.b_to.value) });
  });
  el.append(f);
}

// The row class of a change: its diff status, or `significant` for a significant change that is
// none of those.
export function rowClass(m) {
  if (m.status && m.status !== 'not_significant') return m.status;
  return m.significant ? 'significant' : '';
}

// The comparison is the diff's own (/api/v1/compare: `inferscope diff`'s significance test
// against the slice-to-slice spread); significant changes are highlighted.
export async function compare(el, state, nav) {
  const a = rangeParams(state);
  const profileA = await apiGet('/profile', a).catch(() => null);
  if (!profileA) {
    el.insertAdjacentHTML('beforeend', '<p class="notice">Range A holds no GPU activity: pick a wider range.</p>');
    return;
  }
  const b = rangeB(state, profileA);
  rangeForm(el, state, b, nav);
  const params = { ...(a.last ? { last: a.last } : { from: a.from, to: a.to }), b_from: b.from, b_to: b.to };
  let cmp;
  try {
    cmp = await apiGet('/compare', params);
  } catch (e) {
    el.insertAdjacentHTML('beforeend', `<p class="notice" data-testid="compare-error">${esc(e.message)}</p>`);
    return;
  }
  const c = cmp.comparison;
  const s = section(el, `Candidate (A) ${fmtTime(profileA.range.from_unix_ns)} … ${fmtTime(profileA.range.to_unix_ns)} vs baseline (B) ${fmtTime(b.from * 1e9)} … ${fmtTime(b.to * 1e9)}`,
    `normalized ${c.normalization}; ${c.regression ? `${c.regressions} regressions` : 'no regression'}, ${c.improvements} improvements; judged against the spread of the baseline's ${c.baseline?.slices || 'whole range (no slices)'} and the candidate's ${c.candidate?.slices || 'whole range (no slices)'}`);
  s.dataset.testid = 'compare-summary';
  const rows = c.changes.map((m) => {
    // status (docs/diff.md): regression, improvement, explained (worse, but faster kernels
    // account for it) or not_significant.
    const cls = rowClass(m);
    const mark = { regression: 'worse', improvement: 'better', explained: 'explained', significant: 'changed' }[cls] || '';
    return `<tr class="${cls}" data-key="${esc(m.key)}"><td class="name">${esc(m.label)}</td><td>${fmtNum(m.baseline, 3)}</td><td>${fmtNum(m.candidate, 3)}</td><td>${m.delta >= 0 ? '+' : ''}${fmtNum(m.delta, 3)} ${esc(m.unit)}</td><td>${fmtPct(m.relative * 100)}</td><td>${mark ? `<b>${mark}</b>` : 'not significant'}</td></tr>`;
  }).join('');
  s.insertAdjacentHTML('beforeend', `<div class="scroll"><table data-testid="compare-changes"><thead><tr><th>quantity</th><th>baseline (B)</th><th>candidate (A)</th><th>change</th><th>relative</th><th>verdict</th></tr></thead><tbody>${rows}</tbody></table></div>`);
  if (c.notes?.length) s.insertAdjacentHTML('beforeend', `<ul class="muted">${c.notes.map((n) => `<li>${esc(n)}</li>`).join('')}</ul>`);
}

export async function cost(el, state, nav) {
  const f = document.createElement('form');
  f.className = 'rangeform';
  f.innerHTML = `<fieldset><legend>GPU price</legend><label>USD per GPU-hour <input name="price" type="number" min="0" step="0.01" value="${esc(state.price || '')}"></label> <button type="submit">Apply</button></fieldset>`;
  f.addEventListener('submit', (ev) => { ev.preventDefault(); nav({ price: f.price.value }); });
  el.append(f);
  if (!state.price) {
    el.insertAdjacentHTML('beforeend', '<p class="notice">Set a price per GPU-hour to see what the range cost (docs/cost.md); it is kept in the URL.</p>');
    return;
  }
  const p = await apiGet('/profile', { ...rangeParams(state), gpu_hourly_cost: state.price }).catch((e) => ({ error: e.message }));
  if (p.error || !p.cost) {
    el.insertAdjacentHTML('beforeend', `<p class="notice">${esc(p.error || 'no cost for this range')}</p>`);
    return;
  }
  const c = p.cost;
  const s = section(el, 'Cost of the range', c.available ? '' : c.reason);
  const money = (v, d = 4) => (v == null ? '–' : `$${fmtNum(v, d)}`);
  s.insertAdjacentHTML('beforeend', `<dl class="figures">
    <div><dt>GPUs</dt><dd data-testid="cost-gpus">${c.gpus}</dd></div>
    <div><dt>USD per hour</dt><dd data-testid="cost-hour">${money(c.usd_per_hour, 2)}</dd></div>
    <div><dt>USD per 1k requests</dt><dd>${money(c.usd_per_1k_requests)}</dd></div>
    <div><dt>USD per million tokens</dt><dd>${money(c.usd_per_million_tokens)}</dd></div></dl>`);
  for (const [key, title] of [['by_category', 'by category'], ['by_stage', 'by stage']]) {
    if (!c[key]?.length) continue;
    s.insertAdjacentHTML('beforeend', `<h3>${title}</h3><div class="scroll"><table><thead><tr><th>${title.slice(3)}</th><th>share</th><th>USD per 1k requests</th><th>USD per M tokens</th></tr></thead><tbody>${
      c[key].map((r) => `<tr><td>${esc(r.name)}</td><td>${fmtPct(r.share * 100)}</td><td>${money(r.usd_per_1k_requests)}</td><td>${money(r.usd_per_million_tokens)}</td></tr>`).join('')}</tbody></table></div>`);
  }
  s.insertAdjacentHTML('beforeend', `<p class="muted">GPU time: ${fmtNs(p.summary.temporal_breakdown.span_ns)}</p>`);
}
