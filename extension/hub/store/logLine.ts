// One line of an append-only log, as it is on disk. Still one JSON object any JSON reader parses,
// with two fields put first:
//   {"crc32":"1a2b3c4d","synced":N, …the record's own fields…}
// `crc32` covers every byte after its own field, so damage that still parses (a flipped digit, a
// byte of a body) is caught, not read as the truth. `synced`: how many bytes of the log were
// fdatasync'd when this line's batch was written — a later line whose mark lies past a bad one
// proves the bad one had reached the disk whole, so it is damage, not a write a crash tore
// (logScan.ts). A line without the two fields is one an earlier version wrote, read as it was.
import { crc32 } from 'node:zlib';
import { parseState } from '../bus/dict';

const HEAD = Buffer.from('{"crc32":"');
/** `{"crc32":"` + 8 hex digits + `",`: where the checksummed bytes start. */
const CHECKED_AT = HEAD.length + 8 + 2;
const SYNCED = Buffer.from('"synced":');
const HEX = /^[0-9a-f]{8}$/;
const UNKNOWN = 'a line in a format this Handoff does not know (written by a later version?)';

export type ParsedLine<T> = { ok: true; value: T; synced?: number } | { ok: false; why: string };

/** The line for `json` (one object, no newline), marked with the bytes synced before it. */
export function frameLine(json: string, synced: number): string {
  const rest = json === '{}' ? `"synced":${synced}}` : `"synced":${synced},${json.slice(1)}`;
  return `{"crc32":"${crc32(rest).toString(16).padStart(8, '0')}",${rest}`;
}

/** `quick`: what the caller needs of the record, read without parsing it whole, or undefined (parsed whole). */
export function parseLine<T>(
  bytes: Buffer,
  revive: (parsed: T) => T,
  quick?: (json: string) => T | undefined,
): ParsedLine<T> {
  const record = recordOf(bytes);
  if ('why' in record) return { ok: false, why: record.why };
  const known = record.synced !== undefined ? quick?.(record.json) : undefined; // checked by its CRC-32
  if (known) return { ok: true, value: known, synced: record.synced };
  try {
    return { ok: true, value: parseState(record.json, revive), synced: record.synced };
  } catch {
    return { ok: false, why: 'not a JSON line' };
  }
}

/** A good line framed anew with a mark of 0 (it proves nothing of the file it is copied into); undefined if bad. */
export function reframe(bytes: Buffer): string | undefined {
  const record = recordOf(bytes);
  if ('why' in record) return undefined;
  try {
    JSON.parse(record.json);
  } catch {
    return undefined;
  }
  return frameLine(record.json, 0);
}

/** The record's own JSON, its frame checked and taken off (unparsed). */
function recordOf(bytes: Buffer): { json: string; synced?: number } | { why: string } {
  if (!bytes.subarray(0, HEAD.length).equals(HEAD)) return { json: bytes.toString('utf8') };
  const hex = bytes.toString('latin1', HEAD.length, HEAD.length + 8);
  const marked = bytes.subarray(CHECKED_AT, CHECKED_AT + SYNCED.length);
  if (!HEX.test(hex) || bytes[HEAD.length + 8] !== 0x22 || bytes[HEAD.length + 9] !== 0x2c || !marked.equals(SYNCED))
    return { why: UNKNOWN };
  if (crc32(bytes.subarray(CHECKED_AT)) !== parseInt(hex, 16)) return { why: 'its checksum does not match' };
  let at = CHECKED_AT + SYNCED.length;
  let synced = 0;
  for (; bytes[at] >= 0x30 && bytes[at] <= 0x39; at++) synced = synced * 10 + bytes[at] - 0x30;
  const after = bytes[at];
  if (at === CHECKED_AT + SYNCED.length || (after !== 0x2c && after !== 0x7d)) return { why: UNKNOWN };
  return { json: after === 0x7d ? '{}' : `{${bytes.toString('utf8', at + 1)}`, synced };
}
