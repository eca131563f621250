#!/usr/bin/env bash
# Runs mcp_client.mjs (the official MCP TypeScript SDK client against `inferscope mcp` and the
# agent's /mcp). Exit 77 = skipped: no node or no `npm ci --prefix tests/mcp`, unless
# INFERSCOPE_REQUIRE_MCP=1 (CI), where a missing SDK fails.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
if ! command -v node >/dev/null || [[ ! -d "$here/node_modules/@modelcontextprotocol/sdk" ]]; then
  msg="mcp_sdk_client: skipped: needs node and 'npm ci --prefix tests/mcp' (the MCP TypeScript SDK)"
  if [[ "${INFERSCOPE_REQUIRE_MCP:-}" == "1" ]]; then
    echo "$msg; INFERSCOPE_REQUIRE_MCP=1 makes this a failure" >&2
    exit 1
  fi
  echo "$msg" >&2
  exit 77
fi
exec node "$here/mcp_client.mjs" --inferscope "$1" --fixture "$2" --source-dir "$here/../.."
