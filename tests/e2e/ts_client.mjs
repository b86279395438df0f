// Drives an MCP server over stdio with the official TypeScript SDK client
// (Client + StdioClientTransport) and prints what it got as one JSON object.
//
// Usage: node ts_client.mjs NODE_MODULES_DIR ECHO_TEXT SERVER_COMMAND [ARGS...]
//
// The SDK is loaded from NODE_MODULES_DIR (tests/e2e/.deps/npm/node_modules),
// where tests/e2e/run.sh installed the pinned version.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [nodeModules, echoText, command, ...args] = process.argv.slice(2);
const sdk = (file) =>
  import(pathToFileURL(join(nodeModules, "@modelcontextprotocol/sdk/dist/esm", file)).href);
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const { LATEST_PROTOCOL_VERSION } = await sdk("types.js");

const transport = new StdioClientTransport({ command, args, stderr: "pipe" });
let serverStderr = "";
transport.stderr.on("data", (chunk) => (serverStderr += chunk));

// Record every message on the wire, both ways.
const received = [];
const sent = [];
let onmessage;
Object.defineProperty(transport, "onmessage", {
  configurable: true,
  get: () => onmessage && ((msg, extra) => (received.push(msg), onmessage(msg, extra))),
  set: (handler) => (onmessage = handler),
});
const send = transport.send.bind(transport);
transport.send = (msg, options) => (sent.push(msg), send(msg, options));

const out = { requestedVersion: LATEST_PROTOCOL_VERSION };
const client = new Client({ name: "mcp-stdio-e2e-ts-client", version: "1.0.0" });
await client.connect(transport);
out.protocolVersion = received.find((m) => m.id === sent[0].id)?.result?.protocolVersion;
out.serverInfo = client.getServerVersion();
out.capabilities = client.getServerCapabilities();

out.tools = (await client.listTools()).tools;
out.echo = await client.callTool({ name: "echo", arguments: { text: echoText } });
out.add = await client.callTool({ name: "add", arguments: { a: 0.1, b: 0.2 } });
out.ping = await client.ping();
// Bad arguments: a tool execution error (a result with isError) since 2025-11-25.
out.badArguments = await client.callTool({ name: "add", arguments: { a: 1 } });

// Errors the server must report as JSON-RPC errors.
const errorCode = async (promise) => {
  try {
    await promise;
    return null;
  } catch (e) {
    return e.code ?? String(e);
  }
};
out.listResourcesError = await errorCode(client.listResources());
out.unknownToolError = await errorCode(client.callTool({ name: "no-such-tool", arguments: {} }));

await client.close();
out.sentMethods = sent.map((m) => m.method ?? "(response)");
out.serverStderr = serverStderr;
console.log(JSON.stringify(out));
