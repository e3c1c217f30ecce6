import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyTypeProvider,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';

type TypeBoxFor<Schema> = TypeBoxTypeProvider & { schema: Schema };

/** `T` with every array and property read-only. */
type ReadOnlyDeep<T> = T extends readonly (infer Item)[]
  ? readonly ReadOnlyDeep<Item>[]
  : T extends object
    ? { readonly [K in keyof T]: ReadOnlyDeep<T[K]> }
    : T;

/**
 * `@fastify/type-provider-typebox`'s provider, except that a reply may be a read-only value (the services answer
 * read-only arrays, and the serialiser only reads what it is given).
 */
interface TypeBoxRoutes extends FastifyTypeProvider {
  validator: TypeBoxFor<this['schema']>['validator'];
  serializer: ReadOnlyDeep<TypeBoxFor<this['schema']>['serializer']>;
}

/**
 * The Fastify instance every route plugin receives: request params, query and body, and the reply, are typed from
 * the route's TypeBox schemas (validation itself stays with the Ajv instances of `resources/validation.ts`).
 */
export type TypedApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxRoutes
>;
