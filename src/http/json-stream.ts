import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';

// Large JSON responses written a slice at a time. Serializing a 30 MB (or 100 MB) answer in one JSON.stringify holds
// the event loop for 80 ms (or 300 ms) during which no other request is served; streamed, each slice of records is
// serialized in a tick of its own, the loop turns between slices, and the socket's backpressure paces the reads.

/** A part of a streamed JSON document: a value written as is, or an array given a slice of items at a time. */
export type JsonPart = { value: unknown } | { slices: AsyncIterable<unknown[]> };

/**
 * A JSON object whose fields are written in the order given, the arrays among them a slice at a time, each item
 * with JSON.stringify (so the items must hold exactly what the response schema would serialize, in its order).
 * The text is the same as JSON.stringify of the whole object.
 */
export function jsonObjectStream(fields: [name: string, part: JsonPart][]): Readable {
  return Readable.from(objectChunks(fields), { objectMode: false });
}

/** A JSON array given a slice of items at a time. */
export function jsonArrayStream(slices: AsyncIterable<unknown[]>): Readable {
  return Readable.from(arrayChunks(slices), { objectMode: false });
}

async function* objectChunks(fields: [string, JsonPart][]): AsyncGenerator<string> {
  let head = '{';
  for (const [index, [name, part]] of fields.entries()) {
    head += `${index > 0 ? ',' : ''}${JSON.stringify(name)}:`;
    if ('value' in part) {
      head += JSON.stringify(part.value);
      continue;
    }
    yield head;
    head = '';
    yield* arrayChunks(part.slices);
  }
  yield `${head}}`;
}

async function* arrayChunks(slices: AsyncIterable<unknown[]>): AsyncGenerator<string> {
  yield '[';
  let first = true;
  for await (const items of slices) {
    if (items.length === 0) continue;
    // One slice serialized in this tick; the next one after the loop has turned (reading a slice from SQLite
    // settles at once, so awaiting it alone would not let anything else run).
    yield `${first ? '' : ','}${items.map((item) => JSON.stringify(item)).join(',')}`;
    first = false;
    await nextTurn();
  }
  yield ']';
}
