import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Requests of one connection that may wait for their turn before the connection stops being read. */
const PIPELINED_REQUESTS_WAITING = 32;

/** The requests of one connection: the answer under way, and the requests waiting for it. */
interface Connection {
  answering: ServerResponse | null;
  waiting: [IncomingMessage, ServerResponse][];
  /** Whether the end of the answer under way is being waited for (only while requests wait behind it). */
  watching: boolean;
  /** Whether reading was paused here for the requests waiting (Node pauses for reasons of its own too). */
  paused: boolean;
}

const connectionOf = Symbol('almanac connection');
type ServedSocket = Socket & { [connectionOf]?: Connection };

/**
 * Answers the requests of a connection one at a time, as nginx in front of PHP answers WordPress's. An HTTP/1.1
 * client may send requests without waiting for answers (pipelining), and Node hands the listener every request of the
 * data it reads at once: hundreds from one 64 KB read. Their answers must go out in order anyway, but each was
 * computed at once: one client that pipelined 3,000 list reads and read none of the answers held the process's CPU for
 * 20 s, during which a read by id from another client waited, and 400 MB for the answers it never read; and a read
 * pipelined after a write could be computed before the write was made. Now the next request of a connection starts
 * once the answer before it is finished and the client has taken it (the socket drained), so a client that does not
 * read its answers gets no more computed; the connection is not read while PIPELINED_REQUESTS_WAITING requests
 * wait; and those still waiting when the connection closes are never begun. A client that waits for each answer, as
 * almost all do, finds the previous one finished: nothing is waited for or listened to then.
 */
export function oneRequestAtATime(listener: RequestListener): RequestListener {
  const start = (connection: Connection, req: IncomingMessage, res: ServerResponse) => {
    connection.answering = res;
    listener(req, res);
  };
  /** Starts the next waiting request, and watches for its end if others wait behind it. */
  const next = (socket: Socket, connection: Connection) => {
    connection.watching = false;
    const waiting = connection.waiting.shift();
    if (waiting === undefined) return;
    if (connection.paused && connection.waiting.length < PIPELINED_REQUESTS_WAITING) {
      connection.paused = false;
      socket.resume();
    }
    start(connection, ...waiting);
    if (connection.waiting.length > 0) watch(socket, connection);
  };
  /**
   * Calls `next` once the answer under way is finished and the socket has sent it. If the connection closes first, the
   * requests still waiting are dropped: none was begun, none answered, as if the client had not sent them.
   */
  const watch = (socket: Socket, connection: Connection) => {
    connection.watching = true;
    const res = connection.answering!;
    const ended = () => {
      res.off('finish', ended);
      socket.off('close', ended);
      afterDrain(socket, () => (socket.destroyed ? drop(connection) : next(socket, connection)));
    };
    if (res.writableFinished || socket.destroyed) return ended();
    res.on('finish', ended);
    socket.on('close', ended);
  };
  const drop = (connection: Connection) => {
    for (const [, res] of connection.waiting.splice(0)) res.destroy();
    connection.watching = false;
  };
  return (req, res) => {
    const socket = req.socket as ServedSocket;
    const connection = (socket[connectionOf] ??= { answering: null, waiting: [], watching: false, paused: false });
    const previous = connection.answering;
    if (!connection.watching && (previous === null || previous.writableFinished) && !socket.writableNeedDrain) return start(connection, req, res);
    connection.waiting.push([req, res]);
    // Node resumes reading for a body being read: paused again at every request that comes in over the limit
    if (connection.waiting.length >= PIPELINED_REQUESTS_WAITING) {
      connection.paused = true;
      socket.pause();
    }
    if (!connection.watching) watch(socket, connection);
  };
}

/** Calls `then` once the socket has sent what it was given (at once if it has), or has closed. */
function afterDrain(socket: Socket, then: () => void): void {
  if (!socket.writableNeedDrain || socket.destroyed) return then();
  const go = () => {
    socket.off('drain', go).off('close', go);
    then();
  };
  socket.on('drain', go).on('close', go);
}
