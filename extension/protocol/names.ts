// What a name and a message id look like, checked at every boundary (control requests, MCP tools,
// the Matrix wire) and by the bus itself.

/** `name` or `name@node`: letters, digits, '.', '_' or '-' (a node may add ':'). */
export const IDENTITY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}(@[A-Za-z0-9][A-Za-z0-9._:-]{0,127})?$/;
/** A ULID. */
export const MESSAGE_ID_PATTERN = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** Text without NUL, which names nothing and ends strings early in C-based readers. */
// eslint-disable-next-line no-control-regex -- NUL is the one character this pattern refuses
export const NO_NUL_PATTERN = /^[^\u0000]*$/;
