// The official MCP TypeScript SDK client (the one the MCP Inspector is built on) against
// `packctl mcp` over stdio. Its Client.callTool validates every structuredContent --
// successes and errors alike -- against the tool's outputSchema (Ajv) and throws when it
// does not match.
//
//   node mcp_validate.js SPEC_JSON
//   SPEC_JSON: {"command": "...", "args": [...], "env": {...}, "calls": [[tool, args], ...]}
//
// Prints one JSON line: {tools: [{name, outputSchema}], calls: [{tool, structured,
// isError} | {tool, thrown}]}.
"use strict";
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

async function main() {
  const spec = JSON.parse(process.argv[2]);
  const transport = new StdioClientTransport({
    command: spec.command,
    args: spec.args,
    env: spec.env,
    cwd: spec.cwd,
    stderr: "ignore",
  });
  const client = new Client({ name: "mcp-validate", version: "1.0.0" });
  await client.connect(transport);
  const listing = await client.listTools();
  const out = { tools: listing.tools.map((t) => ({ name: t.name, outputSchema: t.outputSchema })), calls: [] };
  for (const [tool, args] of spec.calls) {
    try {
      const result = await client.callTool({ name: tool, arguments: args });
      out.calls.push({ tool, structured: result.structuredContent, isError: !!result.isError });
    } catch (err) {
      out.calls.push({ tool, thrown: String(err && err.message ? err.message : err) });
    }
  }
  await client.close();
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((err) => {
  process.stderr.write(String(err && err.stack ? err.stack : err) + "\n");
  process.exit(1);
});
