// The one line a peer owes the hub on its socket now (a hook's proof, its `ack`), bounded in size
// and in time: a peer that sends too much, closes, or never answers is told apart, never waited on.
import type { Socket } from 'node:net';
import { LineBuffer } from '../../shared/lines';

/** The line and the bytes after it, or why there is none. */
export type FirstLine = { line: string; rest: Buffer } | { missing: 'late' | 'closed' | 'over' };

/** Reads the socket until its next line; the socket is paused once it settles. */
export function firstLine(socket: Socket, maxBytes: number, waitMs: number): Promise<FirstLine> {
  return new Promise((resolve) => {
    const input = new LineBuffer(maxBytes);
    const done = (read: FirstLine) => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      socket.pause();
      resolve(read);
    };
    const timer = setTimeout(() => done({ missing: 'late' }), waitMs);
    const onClose = () => done({ missing: 'closed' });
    const onData = (d: Buffer) => {
      const first = input.firstLine(d);
      if (input.overLimit) done({ missing: 'over' });
      else if (first) done(first);
    };
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.resume();
  });
}
