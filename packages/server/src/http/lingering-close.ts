/**
 * Lingering close (nginx's `lingering_close`): when the service answers before it has read the whole
 * request body (413 over the limit, 401, 404, 429 …), it says `Connection: close`, sends its answer,
 * shuts down its sending side, and then keeps reading and discarding what the client still sends, for
 * at most LINGER_MAX_MS and LINGER_MAX_BYTES, before closing.
 *
 * Why: closing a socket with unread data in it makes the kernel send a reset, and a client still busy
 * writing its upload then gets EPIPE/ECONNRESET and loses the answer it was sent (Node's fetch did, in 8
 * of 20 tries with a 20 MB body). Reading on lets the client see its answer; the caps keep a client
 * that never stops sending from holding the connection, and nothing read is kept, so memory stays flat.
 * Keeping the connection alive instead would make Node read the whole body, however large.
 */
import type { Request, Response } from 'express';

/** The longest a connection lingers after its early answer. */
export const LINGER_MAX_MS = 5_000;
/**
 * The most the service reads (and discards) after its early answer. Node's fetch stops sending once it
 * has read the answer: 4 MB later on loopback, up to 8 MB under load; the cap leaves room for that.
 */
export const LINGER_MAX_BYTES = 32 * 1024 * 1024;

/** True when the request declares a body (HTTP/1.1 framing) that has not been read to its end. */
export function bodyLeftUnread(req: Request): boolean {
  return !req.complete && (req.headers['transfer-encoding'] !== undefined || req.headers['content-length'] !== undefined);
}

/**
 * Call before sending an answer while the request body is still unread: the answer goes out with
 * `Connection: close`, then the connection lingers (see above) and closes.
 */
export function closeAfterLingering(req: Request, res: Response): void {
  const socket = req.socket;
  if (res.headersSent || socket.destroyed) return;
  res.setHeader('Connection', 'close');
  // Counted and dropped as it comes (a listener of our own also keeps Node from "dumping" the request,
  // which would drop the bytes where we cannot count them).
  let discarded = 0;
  const discard = (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > LINGER_MAX_BYTES) socket.destroy();
  };
  req.on('data', discard);
  let deadline: NodeJS.Timeout | undefined;
  // Node's HTTP server ends a `Connection: close` exchange with socket.destroySoon() once the answer is
  // out, which closes the socket right away (a reset, if the client is still sending). Linger instead.
  socket.destroySoon = () => {
    if (socket.writable) socket.end(); // the answer is complete: FIN, and read on
    deadline = setTimeout(() => socket.destroy(), LINGER_MAX_MS).unref();
  };
  // The client closing its side ends it sooner (Node then destroys the socket).
  socket.once('close', () => {
    clearTimeout(deadline);
    req.off('data', discard);
  });
}
