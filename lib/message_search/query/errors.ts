/**
 * The query core's two domain errors: the route answers them differently (410 makes the
 * client restart the query; 400 is a client bug). Bad request fields are built-ins
 * (RangeError/TypeError) and map to 400 like any bad parameter.
 */

/** The manifest moved since the cursor was minted: restart from page 1 (HTTP 410 cursor_expired). */
export class CursorExpiredError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "CursorExpiredError";
  }
}

/** The cursor is forged, truncated, oversized, malformed or minted for another query (HTTP 400). */
export class InvalidCursorError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "InvalidCursorError";
  }
}
