// An open message's body is held as its text, or — once a checkpoint holds it — as where the
// checkpoint holds it: a number, read back when something shows the body. At 100 000 open the
// bodies were 32 of the hub's 181 MB, and almost none is looked at while it waits (a reply, a
// page of inbox, a preview in the panel read a few). The number names a registered page source
// (one per open store) and a byte offset in it: for the first store in the process, the offset
// itself, which V8 holds without a box.
import type { Message, StoredMessage } from './model';

export interface BodyPages {
  /** The body's JSON string literal as it stands at `offset`, quotes included. */
  literal(offset: number): string;
}

/**
 * Offsets below 2⁴⁰ (a terabyte of checkpoint) and 2¹³ sources per process, so a ref stays an exact
 * double (2⁵³). With 2³¹ per source, a body past 2 GiB of checkpoint was read from the next store's file.
 */
const SOURCE = 2 ** 40;
const MAX_SOURCES = 2 ** 13;
const sources: (BodyPages | undefined)[] = [];

/**
 * A page source for one store's bodies; its refs encode its index, so it is never reused. `ref`
 * makes a ref for an offset; `offsetOf` reads one of its own refs back (undefined for another's).
 */
export function registerBodyPages(pages: BodyPages): {
  ref: (offset: number) => number;
  offsetOf: (ref: number) => number | undefined;
} {
  if (sources.length >= MAX_SOURCES)
    throw new Error(`${MAX_SOURCES} stores were opened in this process; their message bodies cannot all be told apart`);
  const index = sources.push(pages) - 1;
  return {
    ref: (offset) => {
      if (!(offset >= 0 && offset < SOURCE))
        throw new RangeError(
          `a message body at byte ${offset} of the checkpoint is past the ${SOURCE} bytes a body reference can address`,
        );
      return index * SOURCE + offset;
    },
    offsetOf: (ref) => (Math.floor(ref / SOURCE) === index ? ref - index * SOURCE : undefined),
  };
}

/** The store behind `ref` closed: its bodies can no longer be read, and say so. */
export function closeBodyPages(pages: BodyPages): void {
  const index = sources.indexOf(pages);
  if (index >= 0) sources[index] = undefined;
}

/** The raw JSON literal of a body held by reference (the checkpoint copies it as it is). */
export function bodyLiteral(ref: number): string {
  const index = Math.floor(ref / SOURCE);
  const pages = sources[index];
  if (!pages) throw new Error('this message body was in a store that is closed now');
  return pages.literal(ref - index * SOURCE);
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
