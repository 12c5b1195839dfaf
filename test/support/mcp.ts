/** An MCP client of the real gateway's `/mcp`, and the text of a tool result. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/** An SDK client connected to the gateway's `/mcp` with `Authorization: Bearer <key>` (none when key is null). */
export async function connectHttpClient(url: string, key: string | null): Promise<Client> {
  const headers: Record<string, string> = key === null ? {} : { Authorization: `Bearer ${key}` };
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } });
  const client = new Client({ name: 'mvr-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** The text of a tool result's first content item (asserting it is text). */
export function firstText(result: unknown): string {
  const content = (result as { content?: unknown }).content as { type: string; text?: string }[] | undefined;
  const first = content?.[0];
  if (first?.type !== 'text' || typeof first.text !== 'string') throw new Error(`no text content in ${JSON.stringify(result)}`);
  return first.text;
}
