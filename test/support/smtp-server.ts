/** A real SMTP server on loopback (the smtp-server package) that records what it receives. */
import { SMTPServer } from 'smtp-server';

export interface ReceivedMessage {
  from: string;
  to: string[];
  raw: string;
}

export interface TestSMTPServer {
  url: string;
  messages: ReceivedMessage[];
  /** While set, every recipient is refused with this SMTP reply (e.g. 550). */
  refuseWith: { code: number; message: string } | null;
  close(): Promise<void>;
}

/** Undoes quoted-printable (RFC 2045 §6.7) so a test can search the decoded body. */
export function decodeQuotedPrintable(raw: string): string {
  return raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/**
 * `starttls`: 'none' offers plain SMTP only (what a man in the middle who strips STARTTLS makes
 * any server look like); 'self-signed' offers STARTTLS with smtp-server's built-in certificate,
 * which no client that checks certificates accepts.
 */
export async function startTestSMTPServer(options: { starttls: 'none' | 'self-signed' } = { starttls: 'none' }): Promise<TestSMTPServer> {
  const state: TestSMTPServer = { url: '', messages: [], refuseWith: null, close: async () => {} };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: options.starttls === 'none' ? ['STARTTLS', 'AUTH'] : ['AUTH'],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (state.refuseWith) {
        const error = new Error(state.refuseWith.message) as Error & { responseCode: number };
        error.responseCode = state.refuseWith.code;
        callback(error);
        return;
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        state.messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: decodeQuotedPrintable(Buffer.concat(chunks).toString('utf8')),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  state.url = `smtp://127.0.0.1:${port}`;
  state.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return state;
}
