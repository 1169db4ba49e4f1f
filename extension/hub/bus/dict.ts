// Name-keyed state is keyed by what agents and remote accounts choose: `toString`, `constructor`
// and `__proto__` are names like any other. Every such record has no prototype — created here, and
// revived so from the journal and the checkpoint — so no name can reach Object.prototype.

/** An empty record with no prototype. */
export function dict<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/** Gives a parsed record (its keys chosen by others) no prototype, in place. */
export function asDict<T>(record: Record<string, T>): Record<string, T> {
  Object.setPrototypeOf(record, null);
  return record;
}

/**
 * JSON.parse for stored bus state: a plain parse, then `revive` turns the name-keyed records into
 * dicts in place. A reviver giving every parsed object a null prototype would turn every message
 * into a slow dictionary object (docs/performance.md, "Loading the store").
 */
export function parseState<T>(text: string, revive: (parsed: T) => T): T {
  return revive(JSON.parse(text));
}
