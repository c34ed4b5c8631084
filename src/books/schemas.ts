// TypeBox schemas, written once: they validate request bodies (Ajv, no type coercion),
// drive response serialization (fast-json-stringify) and describe the API.
import { Type, type Static, type TSchema } from 'typebox';

export const TEXT_MAX_LENGTH = 500;
export const YEAR_MIN = -9999;
export const YEAR_MAX = 9999;

/**
 * 1 to 500 characters, not only white space. NUL and lone UTF-16 surrogates are refused
 * too: PostgreSQL cannot store NUL in text and no store can round-trip a lone surrogate,
 * so accepting them would mean a 5xx or a silently altered record.
 */
const TEXT_PATTERN = '^(?=[\\s\\S]*\\S)[^\\u0000\\uD800-\\uDFFF]*$';

const BookText = (description: string) =>
  Type.String({ minLength: 1, maxLength: TEXT_MAX_LENGTH, pattern: TEXT_PATTERN, description });

const BookYear = Type.Integer({ minimum: YEAR_MIN, maximum: YEAR_MAX, description: 'Year of the book' });

/** 64-bit ids travel as `bigint` inside the service and as exact JSON integers on the wire. */
export const BookId = Type.Unsafe<bigint>({ type: 'integer', minimum: 1, description: 'Unsigned 64-bit id' });

export const Book = Type.Object(
  {
    id: BookId,
    title: Type.String(),
    author: Type.String(),
    year: Type.Integer(),
  },
  { additionalProperties: false },
);
export type Book = Static<typeof Book>;

/** `id` and unknown fields are accepted and ignored (DESIGN.md). */
export const CreateBookBody = Type.Object({
  title: BookText('Title of the book'),
  author: BookText('Author of the book'),
  year: BookYear,
});
export type CreateBookBody = Static<typeof CreateBookBody>;

/** Any subset of the create fields; absent fields keep their stored values. */
export const UpdateBookBody = Type.Object({
  title: Type.Optional(BookText('Title of the book')),
  author: Type.Optional(BookText('Author of the book')),
  year: Type.Optional(BookYear),
});
export type UpdateBookBody = Static<typeof UpdateBookBody>;

export const LoginBody = Type.Object({
  username: Type.String(),
  password: Type.String(),
});
export type LoginBody = Static<typeof LoginBody>;

export const TokenResult = Type.Object({ token: Type.String() }, { additionalProperties: false });

export function Envelope<Data extends TSchema>(data: Data) {
  return Type.Object(
    {
      status: Type.Integer(),
      message: Type.String(),
      data,
    },
    { additionalProperties: false },
  );
}

export const ErrorEnvelope = Envelope(Type.Null());

/** Response schemas shared by every route: any 4xx/5xx is the error envelope. */
export const errorResponses = {
  '4xx': ErrorEnvelope,
  '5xx': ErrorEnvelope,
} as const;
