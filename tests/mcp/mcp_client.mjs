// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
// The official MCP TypeScript SDK client against inferscope's MCP server, over stdio
// (`inferscope mcp`) and over streamable HTTP (the agent's /mcp), on a store filled by
// mcp_store_fixture plus OTLP spans that carry prompt text. Checks: tools/list (and the size of the
// definitions), every tool called and its structuredContent validated against its outputSchema,
// the byte budgets, the error paths (bad range, unknown tool, huge top_n, malformed JSON-RPC, a
// range without data), the 2026-07-28 stateless path (server/discover, _meta, resultType,
// required headers), Origin and bearer-token checks, and that no prompt text, raw request id or
// other span content comes out of any tool. Run by run_client.sh (ctest mcp_sdk_client).

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import Ajv from 'ajv';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, v, i, all) => (i % 2 === 0 ? [...acc, [v.replace(/^--/, ''), all[i + 1]]] : acc), []));
const INFERSCOPE = args.inferscope;
const FIXTURE = args.fixture;
const SOURCE_DIR = args['source-dir'];

// What an engine may put in spans and must never come out: prompt text, completion text, the raw
// request id, a user id.
const SECRETS = ['SECRET-PROMPT-Tell-me-about-zebras', 'SECRET-COMPLETION-stripes',
                 'req-SECRET-7f3a9c', 'user-SECRET-alice'];
const TOOL_BUDGET_BYTES = 12000;
const BYTES_PER_TOKEN = 3;

let failures = 0, checks = 0;
function check(cond, what) {
  checks++;
  if (!cond) {
    failures++;
    console.error(`FAIL: ${what}`);
  }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const outputs = [];  // every text and structuredContent any tool returned, for the privacy check

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'inferscope-mcp-'));
const stateDir = path.join(tmp, 'state');
fs.mkdirSync(stateDir);
let agent = null;
// The agent's access token (docs/agent.md, "Access"): every route but /metrics needs it.
const token = () => fs.readFileSync(path.join(stateDir, 'agent.token'), 'utf8').trim();
const auth = () => ({ authorization: `Bearer ${token()}` });
// `--url` sends the token of the default state dir when its agent.json names that URL.
const urlEnv = () => ({ ...process.env, INFERSCOPE_STATE_DIR: stateDir });

function fill() {
  const r = spawnSync(FIXTURE, ['--dir', stateDir, '--minutes', '30'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`fixture failed: ${r.stderr}`);
  console.log(r.stdout.trim());
}

async function startAgent() {
  agent = spawn(INFERSCOPE, ['agent', '--state-dir', stateDir, '--http-port', '0', '--no-nvml',
                             '--no-scrape', '--window', '1s', '--span-grace', '5s'],
                { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  agent.stderr.on('data', (d) => { log += d; });
  for (let i = 0; i < 100; i++) {
    const file = path.join(stateDir, 'agent.json');
    if (fs.existsSync(file)) {
      const j = JSON.parse(fs.readFileSync(file, 'utf8'));
      if (j.endpoints && j.endpoints.api) return new URL(j.endpoints.api).origin;
    }
    await sleep(100);
  }
  throw new Error(`the agent did not start: ${log}`);
}

async function postSpans(origin) {
  // Spans must end after the agent's first telemetry window began (earlier ones count as late).
  await sleep(1500);
  const now = BigInt(Date.now()) * 1000000n;
  const attr = (key, value) => ({ key, value: typeof value === 'number'
    ? (Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value })
    : { stringValue: value } });
  const spans = [];
  for (let i = 0; i < 5; i++) {
    spans.push({
      traceId: `0123456789abcdef0123456789abcde${i}`, spanId: `0123456789abcde${i}`,
      name: 'llm_request', kind: 2,
      startTimeUnixNano: String(now - 1100000000n), endTimeUnixNano: String(now - 100000000n),
      attributes: [
        attr('gen_ai.request.id', `${SECRETS[2]}-${i}`), attr('gen_ai.prompt', SECRETS[0]),
        attr('gen_ai.completion', SECRETS[1]), attr('user.id', SECRETS[3]),
        attr('gen_ai.response.model', 'meta-llama/Llama-3.1-8B'),
        attr('gen_ai.usage.prompt_tokens', 12), attr('gen_ai.usage.completion_tokens', 30),
        attr('gen_ai.latency.time_in_queue', 0.01), attr('gen_ai.latency.time_to_first_token', 0.12),
        attr('gen_ai.latency.e2e', 0.9),
      ],
      events: [{ name: SECRETS[0], timeUnixNano: String(now - 700000000n), attributes: [attr('prompt', SECRETS[0])] }],
    });
  }
  const body = { resourceSpans: [{ resource: { attributes: [attr('service.name', 'vllm'), attr('host.user', SECRETS[3])] },
                                   scopeSpans: [{ scope: { name: 'vllm' }, spans }] }] };
  const r = await fetch(`${origin}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json', ...auth() },
                                                 body: JSON.stringify(body) });
  check(r.status === 200, `OTLP export accepted (HTTP ${r.status})`);
  // Wait until the spans' window is stored: the profile of the range then has a requests section.
  let last = null;
  for (let i = 0; i < 200; i++) {
    const p = await fetch(`${origin}/api/v1/profile?last=15m`, { headers: auth() });
    if (p.status === 200) {
      last = (await p.json()).requests;
      if (last?.requests === 5) return;
    }
    await sleep(200);
  }
  check(false, `the 5 spans reached the store within 40 s (counters: ${JSON.stringify(last?.counters)})`);
}

function validate(ajv, tool, result, label) {
  const text = result.content?.map((c) => c.text ?? '').join('') ?? '';
  outputs.push(text, JSON.stringify(result.structuredContent ?? null));
  if (result.isError) return text;
  const schema = tool.outputSchema;
  const ok = ajv.validate(schema, result.structuredContent);
  check(ok, `${label}: structuredContent matches ${tool.name}'s outputSchema ${ajv.errorsText()}`);
  check(typeof result.structuredContent.truncated === 'boolean', `${label}: has truncated`);
  if (tool.name !== 'get_context') {
    check(JSON.stringify(result.structuredContent).length <= TOOL_BUDGET_BYTES,
          `${label}: structured result within ${TOOL_BUDGET_BYTES} bytes`);
  }
  if (result.structuredContent.truncated) {
    check(result.structuredContent.hint.length > 0, `${label}: a truncated result names the narrower call`);
  }
  return text;
}

// Every tool, the budgets and the error paths, through one connected SDK client.
async function exercise(client, label, { ranges = true } = {}) {
  const ajv = new Ajv({ strict: false });
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  check(JSON.stringify(names) === JSON.stringify(['compare', 'get_breakdown', 'get_context', 'get_findings',
                                                   'get_timeseries', 'list_targets']),
        `${label}: the six tools are listed (${names})`);
  const definitionBytes = JSON.stringify(tools).length;
  check(definitionBytes / BYTES_PER_TOKEN < 2000,
        `${label}: tool definitions under 2,000 tokens (${definitionBytes} bytes, ~${Math.ceil(definitionBytes / BYTES_PER_TOKEN)} tokens at 3 bytes/token)`);
  for (const t of tools) {
    check(t.outputSchema && t.outputSchema.type === 'object', `${label}: ${t.name} has an outputSchema`);
    check(t.inputSchema.additionalProperties === false, `${label}: ${t.name} rejects unknown arguments`);
  }
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  const call = async (name, a) => {
    const r = await client.callTool({ name, arguments: a });
    return { r, text: validate(ajv, byName[name], r, `${label} ${name} ${JSON.stringify(a)}`) };
  };

  // Defaults: every argument optional.
  let { r, text } = await call('list_targets', {});
  check(!r.isError, `${label}: list_targets with defaults (${text.slice(0, 200)})`);
  if (!r.isError) check(r.structuredContent.targets.length === 2, `${label}: two targets (2 GPUs)`);

  ({ r, text } = await call('get_context', {}));
  check(!r.isError, `${label}: get_context with defaults (${text.slice(0, 200)})`);
  check(text.length <= 6000 * BYTES_PER_TOKEN, `${label}: get_context within the default 6000-token budget`);
  check(/## Diagnosis/.test(text) && /## Top kernels/.test(text) && /launch_overhead/.test(text),
        `${label}: get_context holds the diagnosis and top kernels`);
  ({ r, text } = await call('get_context', { budget: 400, filters: { rank: 1 } }));
  check(!r.isError && text.length <= 400 * BYTES_PER_TOKEN, `${label}: get_context budget 400 kept (${text.length} bytes)`);
  check(r.structuredContent?.truncated === true && /omitted for the budget|more /.test(text),
        `${label}: a cut context says so`);

  for (const g of ['category', 'subcategory', 'kernel', 'rank']) {
    ({ r, text } = await call('get_breakdown', { group_by: g, top_n: 5 }));
    check(!r.isError && r.structuredContent.rows.length <= 5, `${label}: get_breakdown ${g}`);
    if (!r.isError && g !== 'rank') {
      const sum = r.structuredContent.rows.reduce((s, x) => s + x.share_pct, 0) + r.structuredContent.rest.share_pct;
      check(Math.abs(sum - 100) < 0.05, `${label}: ${g} shares with the rest sum to 100 (${sum})`);
    }
  }
  ({ r, text } = await call('get_breakdown', { group_by: 'kernel', top_n: 100 }));
  check(!r.isError, `${label}: get_breakdown top_n 100`);

  ({ r, text } = await call('get_findings', {}));
  check(!r.isError && r.structuredContent.findings.length > 0 &&
        r.structuredContent.findings[0].id === 'launch_overhead', `${label}: get_findings leads with launch_overhead`);

  ({ r, text } = await call('get_timeseries', { metric: 'communication_pct' }));
  check(!r.isError && r.structuredContent.points.length > 0, `${label}: get_timeseries communication_pct (${text.slice(0, 200)})`);
  ({ r, text } = await call('get_timeseries', { step: '1ms' }));
  check(!r.isError && r.structuredContent.points.length <= 200, `${label}: a tiny step stays bounded`);

  if (ranges) {
    ({ r, text } = await call('compare', { range_a: { from: '-30m', to: '-15m' }, range_b: { last: '15m' } }));
    check(!r.isError && r.structuredContent.categories.length > 0, `${label}: compare two ranges (${text.slice(0, 200)})`);
    // A range with no data: a tool error that says how to widen it.
    ({ r, text } = await call('get_context', { range: { from: '2001-01-01T00:00Z', to: '2001-01-02T00:00Z' } }));
    check(r.isError && /No data/.test(text) && /wider range|list_targets/.test(text), `${label}: empty range explained (${text})`);
    ({ r, text } = await call('get_breakdown', { filters: { rank: 7 } }));
    check(r.isError && /No data/.test(text), `${label}: a filter matching nothing explained (${text})`);
  }
  // Error paths that say how to fix the call.
  ({ r, text } = await call('get_context', { range: { last: 'yesterday' } }));
  if (ranges) check(r.isError && /range\.last/.test(text), `${label}: bad range named (${text})`);
  ({ r, text } = await call('get_breakdown', { top_n: 1000000 }));
  check(r.isError && /top_n must be an integer from 1 to 100/.test(text), `${label}: huge top_n refused (${text})`);
  ({ r, text } = await call('get_breakdown', { group_by: 'color' }));
  check(r.isError && /group_by must be/.test(text), `${label}: bad group_by refused`);
  ({ r, text } = await call('get_findings', { rnage: {} }));
  check(r.isError && /unknown argument 'rnage'/.test(text), `${label}: unknown argument refused (${text})`);
  let threw = null;
  try {
    await client.callTool({ name: 'get_flamegraph', arguments: {} });
  } catch (e) {
    threw = e;
  }
  check(threw && threw.code === -32602 && /Unknown tool/.test(threw.message), `${label}: unknown tool is a -32602 error (${threw?.message})`);
}

// Raw JSON-RPC on the stdio transport: malformed lines get JSON-RPC errors, the server lives on.
async function rawStdio() {
  const child = spawn(INFERSCOPE, ['mcp', '--state-dir', stateDir], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stdin.write('this is not json\n');
  child.stdin.write('{"jsonrpc":"2.0","id":1}\n');
  child.stdin.write('[{"jsonrpc":"2.0","id":2,"method":"ping"}]\n');
  child.stdin.write('{"jsonrpc":"2.0","id":3,"method":"ping"}\n');
  child.stdin.write('{"jsonrpc":"2.0","id":4,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}\n');
  child.stdin.write('{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01"}}}\n');
  child.stdin.write('{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"get_findings","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}\n');
  child.stdin.end();
  await new Promise((r) => child.on('close', r));
  const lines = out.trim().split('\n');
  check(lines.every((l) => { try { JSON.parse(l); return true; } catch { return false; } }), 'stdio: one JSON object per line');
  const replies = lines.map((l) => JSON.parse(l));
  const byId = (id) => replies.find((x) => x.id === id);
  check(replies[0].error?.code === -32700 && replies[0].id === null, 'stdio: not JSON -> -32700');
  check(byId(1)?.error?.code === -32600, 'stdio: no method -> -32600');
  check(replies.some((x) => x.id === null && x.error?.code === -32600 && /batch/.test(x.error.message)), 'stdio: a batch -> -32600');
  check(byId(3)?.result && Object.keys(byId(3).result).length === 0, 'stdio: ping answered');
  check(byId(4)?.result?.supportedVersions?.includes('2026-07-28') && byId(4).result.resultType === 'complete',
        'stdio: server/discover (2026-07-28)');
  check(byId(5)?.error?.code === -32022 && byId(5).error.data.supported.includes('2025-11-25'),
        'stdio: unsupported protocol version -> -32022 with the supported list');
  check(byId(6)?.result?.resultType === 'complete' && byId(6).result.structuredContent?.findings?.length > 0,
        'stdio: a stateless tools/call without initialize');
  outputs.push(out);
}

// The 2026-07-28 HTTP rules and the transport's guards, with raw fetch.
async function rawHttp(origin) {
  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
  const post = (body, headers = {}) => fetch(`${origin}/mcp`, {
    method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...auth(), ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body) });
  const modern = { 'mcp-protocol-version': '2026-07-28' };
  let r = await post({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: meta } },
                     { ...modern, 'mcp-method': 'server/discover' });
  let j = await r.json();
  check(r.status === 200 && j.result.supportedVersions.includes('2026-07-28'), 'http: server/discover');
  r = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_findings', arguments: {}, _meta: meta } },
                 { ...modern, 'mcp-method': 'tools/call', 'mcp-name': 'get_findings' });
  j = await r.json();
  check(r.status === 200 && j.result.resultType === 'complete' && j.result.structuredContent.findings.length > 0,
        'http: stateless tools/call with the required headers');
  outputs.push(JSON.stringify(j));
  r = await post({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get_findings', _meta: meta } },
                 { ...modern, 'mcp-method': 'tools/call' });
  j = await r.json();
  check(r.status === 400 && j.error.code === -32020, 'http: missing Mcp-Name -> 400 -32020');
  r = await post({ jsonrpc: '2.0', id: 4, method: 'tools/list', params: { _meta: meta } },
                 { 'mcp-protocol-version': '2025-11-25', 'mcp-method': 'tools/list' });
  j = await r.json();
  check(r.status === 400 && j.error.code === -32020, 'http: header version differing from _meta -> 400 -32020');
  r = await post({ jsonrpc: '2.0', id: 5, method: 'resources/list', params: { _meta: meta } },
                 { ...modern, 'mcp-method': 'resources/list' });
  j = await r.json();
  check(r.status === 404 && j.error.code === -32601, 'http: unknown method -> 404 -32601');
  r = await post('{"jsonrpc": "2.0", "id": 6, "method": ');
  j = await r.json();
  check(r.status === 400 && j.error.code === -32700, 'http: malformed JSON -> 400 -32700');
  r = await post({ jsonrpc: '2.0', id: 7, method: 'ping' }, { origin: 'https://evil.example' });
  check(r.status === 403, 'http: a foreign Origin -> 403');
  r = await post({ jsonrpc: '2.0', id: 8, method: 'ping' }, { origin: 'http://localhost:5173' });
  check(r.status === 403, 'http: a page on another loopback port -> 403 (another site)');
  r = await post({ jsonrpc: '2.0', id: 8, method: 'ping' }, { origin });
  check(r.status === 200, "http: the agent's own Origin is served");
  r = await fetch(`${origin}/mcp`, { headers: auth() });
  check(r.status === 405, 'http: GET /mcp -> 405 (no stream)');
  // The agent's token (one secret for every route): without it or with another, 401.
  r = await post({ jsonrpc: '2.0', id: 9, method: 'ping' }, { authorization: '' });
  j = await r.json();
  check(r.status === 401 && j.error.code === -32600, 'http: no token -> 401 (a JSON-RPC error)');
  r = await post({ jsonrpc: '2.0', id: 10, method: 'ping' }, { authorization: 'Bearer tok-123' });
  check(r.status === 401, 'http: a wrong token -> 401');
}

async function main() {
  fill();
  const origin = await startAgent();
  await postSpans(origin);

  // stdio, store
  let client = new Client({ name: 'inferscope-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: INFERSCOPE, args: ['mcp', '--state-dir', stateDir], stderr: 'pipe' }));
  check(client.getServerVersion()?.name === 'inferscope', 'stdio: initialize handshake');
  await exercise(client, 'stdio');
  await client.close();

  // streamable HTTP on the agent
  client = new Client({ name: 'inferscope-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${origin}/mcp`),
                                                        { requestInit: { headers: auth() } }));
  check(client.getServerVersion()?.name === 'inferscope', 'http: initialize handshake');
  await exercise(client, 'http');
  await client.close();

  // stdio, agent URL as the source
  client = new Client({ name: 'inferscope-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: INFERSCOPE, args: ['mcp', '--url', origin], env: urlEnv(),
                                                 stderr: 'pipe' }));
  const viaUrl = await client.callTool({ name: 'get_context', arguments: { budget: 1000 } });
  check(!viaUrl.isError && /source: agent:/.test(viaUrl.content[0].text), 'stdio --url: get_context through the agent API');
  outputs.push(JSON.stringify(viaUrl));
  await client.close();

  // stdio, trace files as the source
  client = new Client({ name: 'inferscope-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({
    command: INFERSCOPE, args: ['mcp', path.join(SOURCE_DIR, 'examples/vllm_tp2_decode')], stderr: 'pipe' }));
  await exercise(client, 'traces', { ranges: false });
  await client.close();

  await rawStdio();
  await rawHttp(origin);

  // `inferscope context` on the store and on the agent URL: within budget, exit 3 without data.
  for (const source of [['--state-dir', stateDir], ['--url', origin]]) {
    const r = spawnSync(INFERSCOPE, ['context', ...source, '--last', '1h', '--budget', '3000'],
                        { encoding: 'utf8', env: urlEnv() });
    check(r.status === 0 && r.stdout.length <= 3000 * BYTES_PER_TOKEN && /## Diagnosis/.test(r.stdout) &&
          /span e2e p50/.test(r.stdout), `context ${source[0]}: exit ${r.status}, ${r.stdout.length} bytes ${r.stderr} ${r.stdout.slice(r.stdout.indexOf("## Engine"))}`);
    outputs.push(r.stdout, r.stderr);
    const none = spawnSync(INFERSCOPE, ['context', ...source, '--from', '2001-01-01T00:00Z', '--to', '2001-01-02T00:00Z'],
                           { encoding: 'utf8', env: urlEnv() });
    check(none.status === 3 && /no data matched|no GPU activity|no profile windows/.test(none.stderr),
          `context ${source[0]} on an empty range: exit ${none.status} (${none.stderr.trim()})`);
  }

  // compare on a store whose newer half holds a regression (tools/make_scenario_traces.py --pair
  // regression: the candidate's attention kernels are 30% slower): the attention share rises and
  // the attention kernel leads the kernel changes.
  const scen = path.join(tmp, 'scenarios');
  const gen = spawnSync('python3', [path.join(SOURCE_DIR, 'tools/make_scenario_traces.py'), '--out', scen,
                                    '--pair', 'regression'], { encoding: 'utf8' });
  if (gen.status !== 0) {
    console.log(`note: regression compare not run: python3 tools/make_scenario_traces.py failed: ${gen.stderr}`);
  } else {
    const regDir = path.join(tmp, 'regression');
    fs.mkdirSync(regDir);
    const f = spawnSync(FIXTURE, ['--dir', regDir, '--minutes', '30',
                                  '--baseline', path.join(scen, 'pairs/regression/baseline.json.gz'),
                                  '--candidate', path.join(scen, 'pairs/regression/candidate.json.gz')], { encoding: 'utf8' });
    check(f.status === 0, `regression fixture: ${f.stderr}`);
    client = new Client({ name: 'inferscope-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: INFERSCOPE, args: ['mcp', '--state-dir', regDir], stderr: 'pipe' }));
    const { tools } = await client.listTools();
    const cmp = await client.callTool({ name: 'compare', arguments: { range_a: { from: '-29m', to: '-16m' }, range_b: { last: '14m' } } });
    validate(new Ajv({ strict: false }), tools.find((t) => t.name === 'compare'), cmp, 'compare regression');
    const att = cmp.structuredContent?.categories?.find((c) => c.category === 'attention');
    check(!cmp.isError && att && att.delta_pp > 3, `compare: attention share rises in range_b (${JSON.stringify(att)})`);
    check(/flash_fwd_splitkv_kernel/.test(cmp.structuredContent?.kernels?.[0]?.kernel ?? ''),
          `compare: the attention kernel leads the kernel changes (${JSON.stringify(cmp.structuredContent?.kernels?.[0])})`);
    const ts = await client.callTool({ name: 'get_timeseries', arguments: { metric: 'attention_pct', range: { last: '30m' }, step: '5m' } });
    const pts = ts.structuredContent?.points ?? [];
    check(pts.length >= 5 && pts[pts.length - 1][1] > pts[0][1], `get_timeseries: attention_pct higher at the end (${JSON.stringify(pts)})`);
    await client.close();
  }

  // Privacy: the spans' content is nowhere in any answer (while their latencies are).
  const all = outputs.join('\n');
  for (const s of SECRETS) check(!all.includes(s), `privacy: "${s}" never comes out of a tool`);
  check(!all.includes('SECRET'), 'privacy: no span content at all');
  check(/span e2e p50/.test(all) && /requests \(spans\) +5/.test(all), 'the spans did arrive (their latencies are reported)');
}

try {
  await main();
} catch (e) {
  failures++;
  console.error(`FAIL: ${e.stack || e}`);
} finally {
  if (agent) {
    agent.kill('SIGTERM');
    await new Promise((r) => agent.on('close', r));
  }
  fs.rmSync(tmp, { recursive: true, force: true });
}
console.log(`${checks - failures}/${checks} checks passed`);
process.exit(failures === 0 ? 0 : 1);
