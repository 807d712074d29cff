/* SPDX-License-Identifier: Apache-2.0 */
/*
 * server_int.h: what the MCP server's parts share, and no one else uses:
 * server.c (JSON-RPC, tools/list and tools/call) and schema.c (each
 * tool's schema and the argument check).
 */
#ifndef PH_MCP_SERVER_INT_H
#define PH_MCP_SERVER_INT_H

#include "ph_common.h"
#include "ph_json.h"
#include "mcp.h"

/* One tools/list entry: name, title, description, schemas, annotations. */
void ph_mcp_write_tool(struct ph_jw *jw, const struct ph_mcp_tool *t);
/*
 * Checks args against the tool's schema: known names only, types, enums,
 * minimum/maximum, required.  Returns NULL or why not (in the arena).
 */
const char *ph_mcp_check_args(struct ph_arena *a, const struct ph_mcp_tool *t,
			      const struct ph_json *args);

#endif
