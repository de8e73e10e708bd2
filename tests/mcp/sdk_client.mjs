// The TypeScript MCP SDK's own client (as the MCP Inspector, Claude Desktop and Cursor use it)
// against a live server: list the tools (so the client checks every answer against its tool's
// outputSchema), then call each [tool, arguments] read as JSON from standard input and print
// the results as one JSON array. A result the SDK refuses throws: exit 1 with its message.
//
// node sdk_client.mjs NODE_MODULES URL   (the bearer token in XMEMO_TOKEN)
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [modules, url] = process.argv.slice(2);
const sdk = (path) =>
  import(pathToFileURL(join(modules, "@modelcontextprotocol/sdk/dist/esm", path)).href);
const { Client } = await sdk("client/index.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");

const client = new Client({ name: "xmemo-tests", version: "1.0.0" });
const headers = { Authorization: `Bearer ${process.env.XMEMO_TOKEN}` };
await client.connect(
  new StreamableHTTPClientTransport(new URL("/mcp", url), { requestInit: { headers } }),
);
await client.listTools();
const results = [];
for (const [name, args] of JSON.parse(readFileSync(0, "utf-8"))) {
  const result = await client.callTool({ name, arguments: args });
  results.push({ isError: Boolean(result.isError), text: result.content[0].text });
}
await client.close();
process.stdout.write(JSON.stringify(results));
