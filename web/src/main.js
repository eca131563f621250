// The dashboard's entry: the URL fragment holds the whole state (view, range, GPU, compare range,
// price), so a view can be shared by its link; each change re-renders the chosen view.
import { apiGet } from './api.js';
import { overview, timeline, detail } from './views.js';
import { compare, cost } from './compare.js';
import { esc, fmtTime } from './format.js';

const VIEWS = { overview, timeline, detail, compare, cost };
const main = document.getElementById('view');

function readState() {
  const s = Object.fromEntries(new URLSearchParams(location.hash.slice(1)));
  if (!VIEWS[s.view]) s.view = 'overview';
  if (!(s.from && s.to) && !s.last) s.last = '1h';
  return s;
}

function nav(changes) {
  const next = { ...readState(), ...changes };
  if (changes.last) { delete next.from; delete next.to; }
  const q = new URLSearchParams(Object.entries(next).filter(([, v]) => v !== undefined && v !== null && v !== ''));
  location.hash = q.toString();
}

function chrome(state) {
  for (const a of document.querySelectorAll('#tabs a')) {
    const on = a.dataset.view === state.view;
    a.setAttribute('aria-current', on ? 'page' : 'false');
    const keep = { ...state, view: a.dataset.view };
    a.href = `#${new URLSearchParams(Object.entries(keep).filter(([, v]) => v)).toString()}`;
  }
  for (const b of document.querySelectorAll('#range button')) {
    b.setAttribute('aria-pressed', String(!state.from && state.last === b.dataset.last));
  }
  const label = document.getElementById('range-label');
  label.textContent = state.from && state.to
    ? `${fmtTime(state.from * 1e9)} → ${fmtTime(state.to * 1e9)}`
    : `last ${state.last}`;
  document.getElementById('device').value = state.device ?? '';
}

let generation = 0;
async function render() {
  const state = readState();
  const mine = ++generation;
  const t0 = performance.now();
  chrome(state);
  main.setAttribute('aria-busy', 'true');
  const fresh = document.createElement('div');
  try {
    await VIEWS[state.view](fresh, state, nav);
  } catch (e) {
    fresh.innerHTML = `<p class="notice error">Could not load this view: ${esc(e.message)}</p>`;
  }
  if (mine !== generation) return;  // a newer navigation took over
  main.replaceChildren(fresh);
  main.setAttribute('aria-busy', 'false');
  main.dataset.view = state.view;
  // For the browser test (tests/ui): how long the last view took to render, in ms.
  window.__inferscope = { view: state.view, renderMs: performance.now() - t0, renders: (window.__inferscope?.renders || 0) + 1 };
}

async function fillDevices() {
  const sel = document.getElementById('device');
  try {
    const d = await apiGet('/devices', { last: '7d' });
    const seen = [...new Set(d.devices.map((x) => x.device))].sort((a, b) => a - b);
    for (const g of seen) sel.insertAdjacentHTML('beforeend', `<option value="${g}">GPU ${g}</option>`);
    sel.value = readState().device ?? '';
  } catch { /* the select keeps "all" */ }
}

document.getElementById('range').addEventListener('click', (ev) => {
  const b = ev.target.closest('button[data-last]');
  if (b) nav({ last: b.dataset.last, from: undefined, to: undefined });
});
document.getElementById('device').addEventListener('change', (ev) => nav({ device: ev.target.value }));
window.addEventListener('hashchange', render);
let resizeTimer;
window.addEventListener('resize', () => { clearTimeout(resizeTimer); resizeTimer = setTimeout(render, 300); });
fillDevices();
render();
