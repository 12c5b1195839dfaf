import {
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  ReadBuffer,
  serializeMessage,
  type Transport,
} from '@modelcontextprotocol/server';

type RequestId = string | number;

/**
 * MCP over this process's stdin and stdout that answers every request read before the input
 * ends, and only then closes. The SDK's own stdio transport closes at the end of input and drops
 * the answers still being looked up, so `mvr mcp < requests.jsonl` answered only `initialize`.
 */
export class StdioAnsweringAll implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly buffer = new ReadBuffer();
  /** Requests read and not yet answered (nor cancelled). */
  private readonly pending = new Set<RequestId>();
  private ended = false;
  private closed = false;

  constructor(
    private readonly input: NodeJS.ReadableStream = process.stdin,
    private readonly output: NodeJS.WritableStream = process.stdout,
  ) {}

  async start(): Promise<void> {
    this.input.on('data', (chunk: Buffer) => this.read(chunk));
    this.input.on('error', (error: Error) => this.onerror?.(error));
    this.input.on('end', () => {
      // A last line without its newline is still a request.
      this.read(Buffer.from('\n'));
      this.ended = true;
      this.closeWhenAnswered();
    });
    this.output.on('error', (error: Error) => {
      this.onerror?.(error);
      void this.close();
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return;
    await new Promise<void>((resolve, reject) =>
      this.output.write(serializeMessage(message), (error) => (error ? reject(error) : resolve())),
    );
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) this.settle(message.id);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.pause();
    this.onclose?.();
  }

  private read(chunk: Buffer): void {
    try {
      this.buffer.append(chunk);
    } catch (error) {
      this.onerror?.(error as Error);
      return;
    }
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.buffer.readMessage();
      } catch (error) {
        this.onerror?.(error as Error);
        continue;
      }
      if (message === null) return;
      if (isJSONRPCRequest(message)) this.pending.add(message.id);
      // A cancelled request is never answered.
      if (isJSONRPCNotification(message) && message.method === 'notifications/cancelled')
        this.settle((message.params as { requestId?: RequestId } | undefined)?.requestId);
      this.onmessage?.(message);
    }
  }

  private settle(id: RequestId | undefined): void {
    if (id !== undefined) this.pending.delete(id);
    this.closeWhenAnswered();
  }

  private closeWhenAnswered(): void {
    if (this.ended && this.pending.size === 0) void this.close();
  }
}
