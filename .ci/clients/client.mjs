// A TypeScript-SDK client for the proxy interop check: connects to the URL given, lists tools,
// calls echo and a progress-reporting tool, and prints what it got as one JSON line.
//   node client.mjs http://127.0.0.1:PORT/mcp
// Run from a folder whose node_modules has @modelcontextprotocol/sdk.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = new URL(process.argv[2]);
const client = new Client({ name: "mcp-verdict-proxy-interop-ts", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(url);
await client.connect(transport);
const tools = await client.listTools();
const echo = await client.callTool({ name: "echo", arguments: { message: "hi from typescript" } });
let progress = 0;
const long = await client.callTool(
  { name: "trigger-long-running-operation", arguments: { duration: 0.3, steps: 3 } },
  undefined,
  { onprogress: () => { progress += 1; } },
);
console.log(JSON.stringify({
  tools: tools.tools.length,
  echo: echo.content?.[0]?.text ?? null,
  echo_error: echo.isError ?? false,
  long_error: long.isError ?? false,
  progress,
}));
await transport.terminateSession().catch(() => {});
await client.close();
