/**
 * `proceedjs/mcp`: the app's procedures as tools for AI agents, over the Model Context Protocol
 * (docs/mcp.md).
 *
 * @module proceedjs/mcp
 */
export { type McpPluginOptions, mcpPlugin, protocolVersions } from './plugin.js';
export type { ToolDescription } from './tools.js';
