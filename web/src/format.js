// Number and time formatting shared by the views. Every figure the page shows goes through one of
// these, so the browser test can format the API's numbers the same way and compare.

export const fmtPct = (v) => (v == null || !isFinite(v) ? '–' : `${v.toFixed(1)}%`);

export function fmtNs(ns) {
  if (ns == null || !isFinite(ns)) return '–';
  const a = Math.abs(ns);
  if (a >= 60e9) return `${(ns / 60e9).toFixed(1)} min`;
  if (a >= 1e9) return `${(ns / 1e9).toFixed(2)} s`;
  if (a >= 1e6) return `${(ns / 1e6).toFixed(2)} ms`;
  if (a >= 1e3) return `${(ns / 1e3).toFixed(1)} µs`;
  return `${Math.round(ns)} ns`;
}

export function fmtBytes(b) {
  if (b == null || !isFinite(b)) return '–';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (Math.abs(b) >= 1000 && i < units.length - 1) { b /= 1000; i++; }
  return `${i ? b.toFixed(1) : b} ${units[i]}`;
}

export const fmtInt = (n) => (n == null ? '–' : Math.round(n).toLocaleString('en-US'));
export const fmtNum = (n, digits = 2) => (n == null || !isFinite(n) ? '–' : n.toFixed(digits));
export const fmtMs = (s) => (s == null || !isFinite(s) ? '–' : `${(s * 1e3).toFixed(1)} ms`);

export function fmtTime(unixNs) {
  if (!unixNs) return '–';
  return new Date(unixNs / 1e6).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

// Escapes text for innerHTML (kernel names hold <, >, &).
export function esc(s) {
  return String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}

// The 14 categories of docs/taxonomy.md in report order, each with a colour readable on light
// and dark backgrounds.
export const CATEGORIES = [
  ['attention', '#4e79a7'], ['matmul', '#f28e2b'], ['moe', '#b07aa1'], ['communication', '#e15759'],
  ['kv_cache', '#76b7b2'], ['quantization', '#edc948'], ['normalization', '#59a14f'],
  ['activation', '#9c755f'], ['positional', '#ff9da7'], ['sampling', '#86bcb6'],
  ['memory', '#bab0ac'], ['elementwise', '#d37295'], ['embedding', '#a0cbe8'], ['other', '#8c8c8c'],
];
export const categoryColor = Object.fromEntries(CATEGORIES);
