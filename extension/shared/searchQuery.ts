// The one query language of a search, the editor's box and `handoff search` alike: words, and
// from: to: thread: state: filters (`from:builder state:settled parser`). `thread:round1` worked in
// the box and was a word on the command line, which had only --thread.
import { IDENTITY_PATTERN } from '../protocol/names';
import { SEARCH_STATES, type SearchQuery } from '../protocol/views';

const FILTERS = ['from', 'to', 'thread', 'state'] as const;
type Filter = (typeof FILTERS)[number];
const STATES = new Set<string>(SEARCH_STATES);

/**
 * `text` as a query of at most `limit` hits, or why it is not one. `given` are filters set another
 * way (the CLI's --from, --thread…): one given both ways is a mistake, not a choice.
 */
export function parseSearch(
  text: string,
  limit: number,
  given: Partial<Record<Filter, string>> = {},
): SearchQuery | string {
  const q: SearchQuery = { limit };
  const words: string[] = [];
  const tokens = text.trim().split(/\s+/).filter(Boolean);
  const filters: [Filter, string][] = [];
  for (const [key, value] of Object.entries(given)) if (value !== undefined) filters.push([key as Filter, value]);
  for (const token of tokens) {
    const m = /^([a-z]+):(.*)$/i.exec(token);
    const key = m?.[1].toLowerCase() as Filter | undefined;
    if (!m || !key || !FILTERS.includes(key)) words.push(token);
    else filters.push([key, m[2]]);
  }
  for (const [key, value] of filters) {
    if (!value) return `${key}: needs a value, e.g. ${key}:${key === 'state' ? 'settled' : 'builder'}`;
    if (q[key] !== undefined)
      return given[key] !== undefined ? `--${key} and ${key}: are both given: give one` : `${key}: is given twice`;
    if (key === 'state') {
      if (!STATES.has(value.toLowerCase())) return `state:${value} is not a state: one of ${SEARCH_STATES.join(', ')}`;
      q.state = value.toLowerCase() as SearchQuery['state'];
    } else if (key === 'thread') {
      if (value.length > 256) return 'thread: is at most 256 characters';
      q.thread = value;
    } else {
      if (!IDENTITY_PATTERN.test(value)) return `${key}:${value} is not an identity name`;
      q[key] = value;
    }
  }
  if (words.length) q.text = words.join(' ');
  return q;
}
