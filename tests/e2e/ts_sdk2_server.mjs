// An MCP server on the official TypeScript SDK 2.x (@modelcontextprotocol/server,
// serveStdio): MCP 2026-07-28 when the client probes with server/discover, the
// initialize handshake otherwise, from one factory.
//
// Usage: node ts_sdk2_server.mjs NODE_MODULES_DIR
//
// The SDK is loaded from NODE_MODULES_DIR (tests/e2e/.deps/npm/node_modules),
// where tests/e2e/run.sh installed the pinned version.
//
// Tools:
//   change_tools()  -> "tools changed", after telling the subscriptions/listen
//                      streams that the tool list changed
//   whoami()        -> "ts-sdk2 pid <pid>" (which process answered)
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [nodeModules] = process.argv.slice(2);
const load = (file) =>
  import(pathToFileURL(join(nodeModules, "@modelcontextprotocol/server/dist", file)).href);
const { McpServer } = await load("index.mjs");
const { serveStdio } = await load("stdio.mjs");

serveStdio(() => {
  const server = new McpServer(
    { name: "ts-sdk2-e2e", version: "1.0.0" },
    { capabilities: { tools: { listChanged: true } } },
  );
  server.registerTool(
    "change_tools",
    { description: "Tells the subscriptions/listen streams that the tool list changed." },
    async () => {
      server.sendToolListChanged();
      return { content: [{ type: "text", text: "tools changed" }] };
    },
  );
  server.registerTool("whoami", { description: "Which process answered." }, async () => ({
    content: [{ type: "text", text: `ts-sdk2 pid ${process.pid}` }],
  }));
  return server;
});
console.error("ts-sdk2-e2e: serving on stdio");
