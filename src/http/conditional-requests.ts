// Conditional requests on one book (RFC 9110 §13): its strong ETag, made of its id and version
// (the version rises with every write of it: src/store/by-id.ts), If-Match on PUT and DELETE,
// If-None-Match on GET. A book's ETag: `"<id>-<version>"`. A header that is not `*` or a list of
// entity tags is refused before anything is compared (the routes answer 400).
import type { VersionedBook } from '../books/book.js';

export function etagOf(book: VersionedBook): string {
  return `"${book.id}-${book.version}"`;
}

/** One entity tag of a list: `"…"` or `W/"…"`, then a comma or the end. */
const ENTITY_TAG = /\s*(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"\s*(?:,|$)/y;

interface EntityTag {
  weak: boolean;
  opaque: string;
}

/**
 * The tags of an If-Match / If-None-Match list; '*' for `*`; 'malformed' for a value that is
 * neither (empty, or an ETag without its quotes such as `2-1`, a common mistake).
 */
function entityTags(header: string): EntityTag[] | '*' | 'malformed' {
  if (header.trim() === '*') return '*';
  const tags: EntityTag[] = [];
  ENTITY_TAG.lastIndex = 0;
  while (ENTITY_TAG.lastIndex < header.length) {
    const match = ENTITY_TAG.exec(header);
    if (!match) return 'malformed';
    tags.push({ weak: match[1] !== undefined, opaque: match[2]! });
  }
  return tags.length > 0 ? tags : 'malformed';
}

/** Whether an If-Match / If-None-Match value is `*` or a list of entity tags (RFC 9110 §13.1.1, §13.1.2). */
export function isWellFormedCondition(header: string): boolean {
  return entityTags(header) !== 'malformed';
}

/**
 * If-Match as the versions of book `id` it accepts: undefined when there is no condition
 * (absent, or `*`: any version of a book that exists, and a missing book is a 404 anyway);
 * [] when none of its tags can match (weak, another book's, not a tag of ours), so the
 * write must not happen.
 */
export function ifMatchVersions(header: string | undefined, id: bigint): readonly number[] | undefined {
  if (header === undefined) return undefined;
  const tags = entityTags(header);
  if (tags === '*') return undefined;
  if (tags === 'malformed') return [];
  const versions: number[] = [];
  const prefix = `${id}-`;
  for (const { weak, opaque } of tags) {
    // If-Match compares strongly: a weak tag never matches.
    if (weak || !opaque.startsWith(prefix)) continue;
    const version = opaque.slice(prefix.length);
    if (/^[1-9]\d{0,14}$/.test(version)) versions.push(Number(version));
  }
  return versions;
}

/** If-None-Match on a read: true when the book's current ETag is one it lists (weak comparison), or `*`. */
export function noneMatchFails(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const tags = entityTags(header);
  if (tags === '*') return true;
  if (tags === 'malformed') return false;
  const opaque = etag.slice(1, -1);
  return tags.some((tag) => tag.opaque === opaque);
}
