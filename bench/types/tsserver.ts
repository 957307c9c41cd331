/**
 * What an editor waits for on a generated API (docs/performance.md, "The editor"): a fresh
 * `tsserver`, the repository's TypeScript, as VS Code starts it for a project, opens the client
 * module and asks for completions where a user types the next call. Each request's answer is
 * checked (the completion names what the API declares), so that a fast wrong answer is not
 * measured as a fast right one.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

interface Message {
  type: 'response' | 'event';
  request_seq?: number;
  success?: boolean;
  message?: string;
  body?: unknown;
}

/** One `tsserver` process, spoken to over its standard input and output. */
export class TsServer {
  readonly #child: ChildProcess;
  readonly #waiting = new Map<number, (message: Message) => void>();
  #seq = 0;
  #buffer = Buffer.alloc(0);

  constructor(tsserver: string) {
    this.#child = spawn(
      process.execPath,
      [tsserver, '--disableAutomaticTypingAcquisition', '--suppressDiagnosticEvents'],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    this.#child.stdout?.on('data', (chunk: Buffer) => this.#read(chunk));
  }

  /** tsserver frames each message as `Content-Length: n`, a blank line, then n bytes of JSON. */
  #read(chunk: Buffer): void {
    this.#buffer = Buffer.concat([this.#buffer, chunk]);
    for (;;) {
      const headerEnd = this.#buffer.indexOf('\r\n\r\n');
      if (headerEnd === -1) return;
      const length = Number(
        /Content-Length: (\d+)/.exec(this.#buffer.subarray(0, headerEnd).toString())?.[1],
      );
      const start = headerEnd + 4;
      if (this.#buffer.length < start + length) return;
      const message = JSON.parse(this.#buffer.subarray(start, start + length).toString()) as Message;
      this.#buffer = this.#buffer.subarray(start + length);
      if (message.type === 'response' && message.request_seq !== undefined) {
        this.#waiting.get(message.request_seq)?.(message);
        this.#waiting.delete(message.request_seq);
      }
    }
  }

  request<Body>(command: string, args: object): Promise<Body> {
    const seq = ++this.#seq;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`tsserver: no answer to ${command} in 300 s`)),
        300_000,
      );
      this.#waiting.set(seq, (message) => {
        clearTimeout(timer);
        if (message.success === false) reject(new Error(`tsserver: ${command} failed: ${message.message}`));
        else resolve(message.body as Body);
      });
      this.#child.stdin?.write(`${JSON.stringify({ seq, type: 'request', command, arguments: args })}\n`);
    });
  }

  /** Sends a request that has no answer (`open`, `change`): the next request is answered after it. */
  #tell(command: string, args: object): void {
    this.#child.stdin?.write(
      `${JSON.stringify({ seq: ++this.#seq, type: 'request', command, arguments: args })}\n`,
    );
  }

  /** Opens a file as an editor does: its text (by default the file's) handed over, its project found from its folder. */
  open(file: string, projectRootPath: string, fileContent = readFileSync(file, 'utf8')): void {
    this.#tell('open', { file, fileContent, projectRootPath });
  }

  /** Types `text` at a position of an open file (1-based line and column). */
  insert(file: string, line: number, offset: number, text: string): void {
    this.#tell('change', { file, line, offset, endLine: line, endOffset: offset, insertString: text });
  }

  /** The most memory the process has held (VmHWM), in MB. */
  peakMb(): number {
    const status = readFileSync(`/proc/${this.#child.pid}/status`, 'utf8');
    return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
  }

  /** The names offered at a position (1-based line and column), after typing `trigger`. */
  async completions(file: string, line: number, offset: number, trigger: string): Promise<string[]> {
    const body = await this.request<{ entries: Array<{ name: string }> } | undefined>('completionInfo', {
      file,
      line,
      offset,
      triggerCharacter: trigger,
      triggerKind: 2,
      includeExternalModuleExports: false,
    });
    return body?.entries.map((entry) => entry.name) ?? [];
  }

  /** The type shown on hover at a position. */
  async quickInfo(file: string, line: number, offset: number): Promise<string> {
    const body = await this.request<{ displayString: string } | undefined>('quickinfo', {
      file,
      line,
      offset,
    });
    return body?.displayString ?? '';
  }

  async close(): Promise<void> {
    const exited = new Promise((resolve) => this.#child.once('exit', resolve));
    this.#child.stdin?.write(`${JSON.stringify({ seq: ++this.#seq, type: 'request', command: 'exit' })}\n`);
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
}
