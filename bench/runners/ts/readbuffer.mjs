// The TypeScript SDK's real ReadBuffer (@modelcontextprotocol/sdk, pinned in package.json
// and package-lock.json), for bench/run.sh.
//
// It is driven exactly as the SDK's own StdioClientTransport / StdioServerTransport drive
// it: append each chunk (a Buffer), then call readMessage() until it returns null; a line
// that fails throws from readMessage() (after the line has been consumed), the transport
// reports it through onerror and goes on: we count it as an error and go on too.
// readMessage() does what the SDK really does per line: Buffer.indexOf('\n') from the
// start of the pending bytes, toString('utf8'), strip one trailing '\r', JSON.parse, and
// validate the result against the JSON-RPC zod schema (JSONRPCMessageSchema.parse).
//
// Usage: node readbuffer.mjs RUNNER CORPUS FILE CHUNK RUNS
//   with BENCH_TS_DEPS = the folder where `npm ci` installed package.json's dependencies.
// Prints: BENCH runner=.. corpus=.. chunk=.. bytes=.. messages=.. errors=.. seconds=<best>
//         median=.. runs=.. checksum=..
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [runner, corpus, file, chunkArg, runsArg] = process.argv.slice(2);
if (!runsArg) {
  console.error('usage: node readbuffer.mjs RUNNER CORPUS FILE CHUNK RUNS');
  process.exit(2);
}
const deps = process.env.BENCH_TS_DEPS;
// The package's exports map '@modelcontextprotocol/sdk/shared/stdio.js' to this file
// for `import` (and to dist/cjs/shared/stdio.js for `require`).
const modulePath = path.join(deps ?? '', 'node_modules/@modelcontextprotocol/sdk/dist/esm/shared/stdio.js');
if (!deps || !existsSync(modulePath)) {
  console.error(`readbuffer.mjs: ${modulePath} not found: run bench/run.sh (it runs npm ci)`);
  process.exit(2);
}
const { ReadBuffer } = await import(pathToFileURL(modulePath).href);

function onePass(data, chunk) {
  const readBuffer = new ReadBuffer();
  let messages = 0;
  let errors = 0;
  let checksum = 0;
  for (let off = 0; off < data.length; off += chunk) {
    readBuffer.append(data.subarray(off, off + chunk));
    for (;;) {
      let message;
      try {
        message = readBuffer.readMessage();
      } catch {
        errors += 1; // StdioClientTransport: this.onerror?.(error), then the next line
        continue;
      }
      if (message === null) break;
      messages += 1;
      checksum += 'id' in message ? 1 : 2;
    }
  }
  return { messages, errors, checksum };
}

const data = readFileSync(file);
const chunk = Number(chunkArg);
const runs = Number(runsArg);
const times = [];
let first = null;
for (let r = 0; r < runs; r++) {
  const t = process.hrtime.bigint();
  const c = onePass(data, chunk);
  times.push(Number(process.hrtime.bigint() - t) / 1e9);
  if (first === null) first = c;
  else if (c.messages !== first.messages || c.errors !== first.errors) throw new Error('runs disagree');
}
times.sort((a, b) => a - b);
console.log(
  `BENCH runner=${runner} corpus=${corpus} chunk=${chunk} bytes=${data.length} messages=${first.messages} ` +
    `errors=${first.errors} seconds=${times[0].toFixed(9)} median=${times[Math.floor(runs / 2)].toFixed(9)} ` +
    `runs=${runs} checksum=${first.checksum}`,
);
