// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
//
// Test client: exports vLLM-like request spans with the real OpenTelemetry JS SDK
// (BatchSpanProcessor + OTLP exporter) to an inferscope OTLP receiver, then prints on stdout a
// JSON summary of what it sent so the caller can check what the receiver summarized.
//
// Every request span carries the real vLLM attribute names (gen_ai.latency.*, gen_ai.usage.*,
// gen_ai.request.*) plus content that must never reach inferscope's store: prompt/completion
// attributes, an event with the prompt, a raw request id and a resource attribute, all marked
// with SECRET. Some non-request spans (unknown names carrying the secret) are mixed in.
//
//   node send_spans.mjs --endpoint http://127.0.0.1:PORT/v1/traces --protocol proto|json
//                       --count N [--base-ns NS|-] [--gzip] [--live-seconds S]
//
// Default: the spans get past timestamps from --base-ns (10 ms apart) and the processor exports
// every 200 ms. --live-seconds S: the way an engine sends them, the N spans end in real time,
// evenly over S seconds (each ending when it is created), and the BatchSpanProcessor keeps the
// SDK's default cadence (an export every 5 s, scheduledDelayMillis), so most spans reach the
// receiver seconds after their end. --base-ns -: the SDK is loaded first, then "ready" is printed
// and the base is read from stdin, so a caller aiming spans at a window a few seconds ahead does
// not race node's startup (seconds on a loaded machine).

import readline from 'node:readline';
import { SpanKind } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';

const SECRET = 'PROMPT-SECRET-7f3a';

function parseArgs(argv) {
  const args = {
    protocol: 'proto', count: 20, gzip: false, baseNs: null, endpoint: null, liveSeconds: null,
  };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '--endpoint') args.endpoint = argv[++i];
    else if (a === '--protocol') args.protocol = argv[++i];
    else if (a === '--count') args.count = Number(argv[++i]);
    else if (a === '--base-ns') {
      const v = argv[++i];
      args.baseNs = v === '-' ? '-' : BigInt(v);
    }
    else if (a === '--gzip') args.gzip = true;
    else if (a === '--live-seconds') args.liveSeconds = Number(argv[++i]);
    else throw new Error(`unknown argument ${a}`);
  }
  if (!args.endpoint) throw new Error('--endpoint is required');
  if (!['proto', 'json'].includes(args.protocol)) throw new Error('--protocol proto|json');
  if (!(args.count > 0)) throw new Error('--count must be positive');
  if (args.liveSeconds !== null && !(args.liveSeconds > 0))
    throw new Error('--live-seconds must be positive');
  if (args.baseNs === null) args.baseNs = BigInt(Date.now() - 60_000) * 1_000_000n;
  return args;
}

// [seconds, nanoseconds]: the SDK's HrTime, exact at ns resolution.
function hrTime(ns) {
  return [Number(ns / 1_000_000_000n), Number(ns % 1_000_000_000n)];
}

// A wrapper that remembers whether any export failed (the processor itself only logs).
class CheckingExporter {
  constructor(inner) {
    this.inner = inner;
    this.failures = 0;
    this.exports = 0;
  }
  export(spans, done) {
    this.inner.export(spans, (result) => {
      this.exports += 1;
      if (result.code !== 0) {
        this.failures += 1;
        process.stderr.write(`export failed: ${result.error}\n`);
      }
      done(result);
    });
  }
  shutdown() { return this.inner.shutdown(); }
  forceFlush() { return this.inner.forceFlush ? this.inner.forceFlush() : Promise.resolve(); }
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const options = { url: args.endpoint };
  if (args.gzip) options.compression = 'gzip';
  const exporter = new CheckingExporter(
      args.protocol === 'proto' ? new ProtoExporter(options) : new JsonExporter(options));
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'vllm-otel-test', 'host.name': `HOST-${SECRET}` }),
    spanProcessors: [new BatchSpanProcessor(
        exporter,
        args.liveSeconds === null ? { maxExportBatchSize: 16, scheduledDelayMillis: 200 } : {})],
  });
  const tracer = provider.getTracer('vllm.llm_engine');
  if (args.baseNs === '-') {
    process.stdout.write('ready\n');
    const lines = readline.createInterface({ input: process.stdin });
    let base = null;
    for await (const line of lines) {
      base = BigInt(line.trim());
      break;
    }
    lines.close();
    if (base === null) throw new Error('--base-ns -: stdin closed before a base was given');
    args.baseNs = base;
  }

  const sums = { queue: 0n, prefill: 0n, decode: 0n, inference: 0n, ttft: 0n, e2e: 0n };
  const maxes = { e2e: 0n };
  let promptTokens = 0, completionTokens = 0, otherSpans = 0;
  let firstEndNs = null, lastEndNs = null;
  const endNs = [];
  const liveStartMs = Date.now();
  for (let i = 0; i < args.count; ++i) {
    // Seconds, as vLLM reports them; distinct per request so percentiles are meaningful.
    const queue = 0.001 * ((i % 7) + 1);
    const prefill = 0.02 + 0.0005 * i;
    const decode = 0.1 + 0.013 * i;
    const inference = prefill + decode;
    const ttft = queue + prefill + 0.003;
    const e2e = queue + inference + 0.005;
    const e2eNs = BigInt(Math.round(e2e * 1e9));
    let startNs = args.baseNs + BigInt(i) * 10_000_000n;
    if (args.liveSeconds !== null) {
      // Request i finishes now: wait for its turn, then end it at the current time.
      const dueMs = liveStartMs + (args.liveSeconds * 1000 * i) / args.count;
      if (dueMs > Date.now()) await new Promise((r) => setTimeout(r, dueMs - Date.now()));
      startNs = BigInt(Date.now()) * 1_000_000n - e2eNs;
    }
    if (firstEndNs === null) firstEndNs = startNs + e2eNs;
    lastEndNs = startNs + e2eNs;
    endNs.push(lastEndNs.toString());
    const span = tracer.startSpan('llm_request', {
      kind: SpanKind.SERVER,
      startTime: hrTime(startNs),
      attributes: {
        'gen_ai.response.model': 'meta-llama/Llama-3.1-8B-Instruct',
        'gen_ai.request.id': `cmpl-RAWID-${i}-${SECRET}`,
        'gen_ai.usage.prompt_tokens': 100 + i,
        'gen_ai.usage.completion_tokens': 20 + i,
        'gen_ai.request.temperature': 0.7,
        'gen_ai.request.top_p': 0.9,
        'gen_ai.request.max_tokens': 256,
        'gen_ai.request.n': 1,
        'gen_ai.latency.time_in_queue': queue,
        'gen_ai.latency.time_to_first_token': ttft,
        'gen_ai.latency.e2e': e2e,
        'gen_ai.latency.time_in_model_prefill': prefill,
        'gen_ai.latency.time_in_model_decode': decode,
        'gen_ai.latency.time_in_model_inference': inference,
        // Content that must be dropped.
        'gen_ai.prompt': `${SECRET}: write a poem about request ${i}`,
        'gen_ai.completion': `COMPLETION-${SECRET}: roses are red`,
        'gen_ai.input.messages': JSON.stringify([{ role: 'user', content: SECRET }]),
        'llm.prompts': [`${SECRET} one`, `${SECRET} two`],
        'user.email': `${SECRET}@example.com`,
      },
    });
    span.addEvent('gen_ai.content.prompt', { 'gen_ai.prompt': SECRET }, hrTime(startNs + 1000n));
    span.end(hrTime(startNs + e2eNs));
    for (const [k, v] of Object.entries({ queue, prefill, decode, inference, ttft, e2e }))
      sums[k] += BigInt(Math.round(v * 1e9));
    if (e2eNs > maxes.e2e) maxes.e2e = e2eNs;
    promptTokens += 100 + i;
    completionTokens += 20 + i;
    if (i % 5 === 0) {
      // An unrelated span (HTTP handler, app code) whose name carries content.
      const other = tracer.startSpan(`POST /v1/chat ${SECRET}`, { startTime: hrTime(startNs) });
      other.setAttribute('http.request.body', SECRET);
      other.end(hrTime(startNs + 1_000_000n));
      otherSpans += 1;
    }
  }
  // Live: the last batch too goes out on the processor's timer (5 s), not on an explicit flush.
  if (args.liveSeconds !== null) await new Promise((r) => setTimeout(r, 6000));
  await provider.forceFlush();
  await provider.shutdown();
  const summary = {
    count: args.count,
    other_spans: otherSpans,
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    stage_sum_ns: Object.fromEntries(Object.entries(sums).map(([k, v]) => [k, Number(v)])),
    e2e_max_ns: Number(maxes.e2e),
    first_end_ns: firstEndNs.toString(),  // strings: ns since 1970 exceed a double's precision
    last_end_ns: lastEndNs.toString(),
    end_ns: endNs,  // of the request spans, in order
    exports: exporter.exports,
    export_failures: exporter.failures,
  };
  process.stdout.write(JSON.stringify(summary) + '\n');
  process.exit(exporter.failures === 0 && exporter.exports > 0 ? 0 : 1);
}

main().catch((e) => {
  process.stderr.write(`send_spans: ${e.stack || e}\n`);
  process.exit(2);
});
