// The agent's JSON API (docs/agent.md, "HTTP API"), same origin. Every view reads it through
// here; the range and filters come from the URL state.

export class ApiError extends Error {
  constructor(status, body) {
    // 401: the session cookie is missing or ended (the agent's token changed; docs/agent.md,
    // "Access"): say how to sign in again rather than the API's message for CLI clients.
    super(status === 401 ? 'Not signed in: run `inferscope ui` on this host and open its link'
      : (body?.error || `HTTP ${status}`));
    this.status = status;
    this.body = body;
  }
}

export async function apiGet(path, params = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, v);
  const url = `/api/v1${path}${q.toString() ? `?${q}` : ''}`;
  const r = await fetch(url, { headers: { Accept: 'application/json' } });
  let body = null;
  try { body = await r.json(); } catch { body = null; }
  if (!r.ok) throw new ApiError(r.status, body);
  return body;
}

// The API's range parameters for a URL state: `last` for a preset, `from`/`to` (Unix seconds)
// for a selection.
export function rangeParams(state, prefix = '') {
  const from = state[`${prefix}from`], to = state[`${prefix}to`];
  const p = from && to ? { from, to } : { last: state[`${prefix}last`] || '1h' };
  if (state.device !== undefined && state.device !== '') p.device = state.device;
  return p;
}
