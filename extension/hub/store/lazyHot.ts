// The hot set as a start from a checkpoint's index leaves it: every open message is there, by id,
// but as the place of its line in the document until something reads it, when it is parsed and
// kept (openIndex.ts). A proxy over the hot set's own object, so every reader of `state.hot` goes
// on reading it as before; once every message has been parsed (the backfills read them all, a
// slice per turn) the state gets the object itself back and the proxy is gone.
import type { BusState, HotMessage } from '../bus/model';

/** A line's place in the document, not parsed yet. */
type Unparsed = number;

export class LazyHot {
  /** Messages not parsed yet. */
  private unparsed: number;
  /** Messages parsed or put since the start, while `tracking`: the start looks at them again (replayed events). */
  private readonly touched = new Set<string>();
  private tracking = true;

  constructor(
    private readonly state: BusState,
    private readonly target: Record<string, HotMessage | Unparsed>,
    count: number,
    private readonly parse: (id: string, lineAt: number) => HotMessage,
    private readonly onAllParsed: () => void,
  ) {
    this.unparsed = count;
    const handler: ProxyHandler<Record<string, HotMessage | Unparsed>> = {
      get: (t, key) => (typeof key === 'string' ? this.read(key) : Reflect.get(t, key)),
      set: (t, key, value) => {
        if (typeof key === 'string') this.replaced(key);
        return Reflect.set(t, key, value);
      },
      deleteProperty: (t, key) => {
        if (typeof key === 'string') this.replaced(key);
        return Reflect.deleteProperty(t, key);
      },
    };
    state.hot = new Proxy(target, handler) as Record<string, HotMessage>;
  }

  /** How many messages are still unparsed. */
  get pending(): number {
    return this.unparsed;
  }

  /** The messages parsed or put so far; from here on they are not remembered. */
  stopTracking(): string[] {
    const touched = [...this.touched];
    this.tracking = false;
    this.touched.clear();
    return touched;
  }

  private read(id: string): HotMessage | undefined {
    const v = this.target[id];
    if (typeof v !== 'number') return v;
    const hot = this.parse(id, v);
    this.target[id] = hot;
    this.parsed(id);
    return hot;
  }

  private replaced(id: string): void {
    if (typeof this.target[id] === 'number') this.parsed(id);
    else if (this.tracking) this.touched.add(id);
  }

  private parsed(id: string): void {
    if (this.tracking) this.touched.add(id);
    if (--this.unparsed > 0) return;
    this.state.hot = this.target as Record<string, HotMessage>;
    this.onAllParsed();
  }
}
