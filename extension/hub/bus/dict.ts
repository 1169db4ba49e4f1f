// Name-keyed state is keyed by what agents and remote accounts choose: `toString`, `constructor`
// and `__proto__` are names like any other. Every such record has no prototype — created here, and
// revived so from the journal and the checkpoint — so no name can reach Object.prototype.

/** An empty record with no prototype. */
export function dict<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/** A JSON.parse reviver that gives every parsed object a null prototype (own keys only, `__proto__` included). */
export function nullPrototypes(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const out = Object.create(null) as Record<string, unknown>;
  for (const k of Object.keys(value)) out[k] = (value as Record<string, unknown>)[k];
  return out;
}

/** JSON.parse for stored bus state. */
export function parseState<T>(text: string): T {
  return JSON.parse(text, nullPrototypes) as T;
}
