// An open message's body is held as its text, or — once a checkpoint holds it — as where the
// checkpoint holds it: a number, read back when something shows the body. Bodies are much of a
// full hub's memory, and almost none is looked at while it waits (a reply, a page of inbox, a
// preview in the panel read a few). The number names a registered page source
// (one per open store), which of its two files (they take turns at checkpoints: the second's refs
// are negative), and a byte offset in it: for the first store in the process, the offset itself
// (or -offset-1), which V8 holds without a box.
import type { Message, StoredMessage } from './model';

export interface BodyPages {
  /** The body's JSON string literal as it stands at `offset` of file 0 or 1. */
  literal(offset: number, file: 0 | 1): string;
}

/**
 * Offsets below 2⁴⁰ (a terabyte of checkpoint) and 2¹³ sources per process, so a ref stays an exact
 * double (2⁵³), and an offset never spills into the next source's range (a body past 2 GiB of one
 * store's checkpoint read from another's).
 */
const SOURCE = 2 ** 40;
const MAX_SOURCES = 2 ** 13;
const sources: (BodyPages | undefined)[] = [];

/** A ref's source, file and offset. */
function decode(ref: number): { index: number; file: 0 | 1; offset: number } {
  const file = ref < 0 ? 1 : 0;
  const r = file === 1 ? -ref - 1 : ref;
  const index = Math.floor(r / SOURCE);
  return { index, file, offset: r - index * SOURCE };
}

/**
 * A page source for one store's bodies; its refs encode its index, so it is never reused. `ref`
 * makes a ref for an offset of one of its files; `offsetOf` reads one of its own refs of that file
 * back (undefined for another's).
 */
export function registerBodyPages(pages: BodyPages): {
  ref: (offset: number, file?: 0 | 1) => number;
  offsetOf: (ref: number, file?: 0 | 1) => number | undefined;
} {
  if (sources.length >= MAX_SOURCES)
    throw new Error(`${MAX_SOURCES} stores were opened in this process; their message bodies cannot all be told apart`);
  const index = sources.push(pages) - 1;
  return {
    ref: (offset, file = 0) => {
      if (!(offset >= 0 && offset < SOURCE))
        throw new RangeError(
          `a message body at byte ${offset} of the checkpoint is past the ${SOURCE} bytes a body reference can address`,
        );
      const r = index * SOURCE + offset;
      return file === 1 ? -r - 1 : r;
    },
    offsetOf: (ref, file = 0) => {
      const d = decode(ref);
      return d.index === index && d.file === file ? d.offset : undefined;
    },
  };
}

/** The store behind `ref` closed: its bodies can no longer be read, and say so. */
export function closeBodyPages(pages: BodyPages): void {
  const index = sources.indexOf(pages);
  if (index >= 0) sources[index] = undefined;
}

/** The raw JSON literal of a body held by reference (the checkpoint copies it as it is). */
export function bodyLiteral(ref: number): string {
  const { index, file, offset } = decode(ref);
  const pages = sources[index];
  if (!pages) throw new Error('this message body was in a store that is closed now');
  return pages.literal(offset, file);
}

export function bodyOf(m: Pick<StoredMessage, 'body'>): string {
  return typeof m.body === 'string' ? m.body : (JSON.parse(bodyLiteral(m.body)) as string);
}

/**
 * A copy of the message with its body read back, for anything that shows or sends it. Always a
 * copy: the hot set's own message may have its body left in the checkpoint at the next one.
 */
export function withBody(m: StoredMessage): Message {
  return { ...m, body: bodyOf(m) };
}
