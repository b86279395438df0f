// Round trips per second against examples/mcp_server.c with the TypeScript SDK's client:
// `Client` over `StdioClientTransport` (@modelcontextprotocol/sdk, the pin of
// bench/runners/ts/package.json, installed by `npm ci` into target/bench/ts-deps), for
// bench/roundtrip/run.sh. The same work as host.c (see there), the SDK's way:
//
//   node ts_client.mjs SERVER N ROUNDS SPAWNS [INFLIGHT]   with BENCH_TS_DEPS set
//
// client.connect() (spawn, initialize, notifications/initialized), one listTools and a
// warm-up of WARM_UP (2000) calls in each mode (whatever N: the JIT's warm-up is not timed,
// in a short smoke run either), then ROUNDS rounds of
//   sequential  N x `await client.callTool({name: 'echo', arguments: {text}})`;
//   inflight    N calls through a pool of INFLIGHT (100) workers, each awaiting its call
//               and starting the next: INFLIGHT outstanding at all times.
// Every result is checked (content [{type: 'text', text}] with the text sent, isError
// false); a wrong one throws and the process exits 2. Then client.close(), and SPAWNS
// times: a new transport and client, connect(), close(). The first response's time is
// taken when the transport hands the initialize response to the client (its onmessage),
// the handshake's end when connect() resolves. The SDK's defaults are kept (stderr
// inherited, a 60 s timeout per request).
//
// Prints ROUNDTRIP lines as host.c does, with client=ts-sdk; cpu_median from
// process.cpuUsage() (user + system of the whole process, the JIT and GC threads too).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

const [server, nArg, roundsArg, spawnsArg, inflightArg] = process.argv.slice(2);
if (!spawnsArg) {
  console.error('usage: node ts_client.mjs SERVER N ROUNDS SPAWNS [INFLIGHT]');
  process.exit(2);
}
const n = Number(nArg);
const rounds = Number(roundsArg);
const spawns = Number(spawnsArg);
const inflight = Number(inflightArg ?? 100);
const WARM_UP = 2000;

const deps = process.env.BENCH_TS_DEPS;
const sdkDir = path.join(deps ?? '', 'node_modules/@modelcontextprotocol/sdk/dist/esm');
if (!deps || !existsSync(sdkDir)) {
  console.error(`ts_client.mjs: ${sdkDir} not found: run bench/roundtrip/run.sh (it runs npm ci)`);
  process.exit(2);
}
const sdk = (file) => import(pathToFileURL(path.join(sdkDir, file)).href);
const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');

const now = () => performance.now() / 1000;
// This process's CPU time (user + system, all threads: the JIT and the GC too), seconds.
const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

// A client and its transport, not connected; `first` gets the time of the first message
// the transport hands to the client.
function newClient() {
  const transport = new StdioClientTransport({ command: server, args: [] });
  const seen = { first: null };
  let onmessage;
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get: () => onmessage && ((msg, extra) => {
      if (seen.first === null) seen.first = now();
      onmessage(msg, extra);
    }),
    set: (handler) => (onmessage = handler),
  });
  const client = new Client({ name: 'roundtrip-ts-sdk', version: '0.0.0' });
  return { client, transport, seen };
}

async function call(client, i) {
  const text = `round trip ${i}`;
  const result = await client.callTool({ name: 'echo', arguments: { text } });
  const c = result.content;
  if (result.isError !== false || !Array.isArray(c) || c.length !== 1 || c[0].type !== 'text' || c[0].text !== text) {
    throw new Error(`tools/call ${i}: wrong result ${JSON.stringify(result)}`);
  }
}

async function sequential(client, count) {
  const t0 = now();
  for (let i = 0; i < count; i++) await call(client, i);
  return now() - t0;
}

async function pooled(client, count, width) {
  let next = 0;
  const worker = async () => {
    while (next < count) await call(client, next++);
  };
  const t0 = now();
  await Promise.all(Array.from({ length: Math.min(width, count) }, worker));
  return now() - t0;
}

const median = (v) => {
  const s = [...v].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const line = (mode, requests, width, v, extra = '') =>
  console.log(`ROUNDTRIP client=ts-sdk mode=${mode} requests=${requests} inflight=${width} ` +
    `seconds=${Math.min(...v).toFixed(9)} median=${median(v).toFixed(9)} runs=${v.length}${extra}`);

try {
  const { client, transport } = newClient();
  await client.connect(transport);
  const tools = (await client.listTools()).tools;
  if (!tools.some((t) => t.name === 'echo')) throw new Error('tools/list: no echo tool');
  await sequential(client, WARM_UP);
  await pooled(client, WARM_UP, inflight);
  const seq = [];
  const par = [];
  const seqCpu = [];
  const parCpu = [];
  for (let r = 0; r < rounds; r++) {
    const c0 = cpuNow();
    seq.push(await sequential(client, n));
    const c1 = cpuNow();
    par.push(await pooled(client, n, inflight));
    seqCpu.push(c1 - c0);
    parCpu.push(cpuNow() - c1);
  }
  await client.close();
  line('sequential', n, 1, seq, ` cpu_median=${median(seqCpu).toFixed(9)}`);
  line('inflight', n, inflight, par, ` cpu_median=${median(parCpu).toFixed(9)}`);

  const first = [];
  const hs = [];
  for (let k = 0; k < spawns; k++) {
    const t0 = now();
    const s = newClient();
    await s.client.connect(s.transport);
    const end = now();
    if (s.seen.first === null) throw new Error('connect() resolved before any message came');
    first.push(s.seen.first - t0);
    hs.push(end - t0);
    await s.client.close();
  }
  line('spawn', 1, 1, first, ` handshake_median=${median(hs).toFixed(9)}`);
} catch (e) {
  console.error(`ts_client.mjs: ${e?.stack ?? e}`);
  process.exit(2);
}
