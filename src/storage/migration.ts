/**
 * One step of a store's schema. Each adapter keeps its schema as an ordered list of these; applied ones are
 * recorded in `schema_migrations` by their position (1-based). Append new migrations at the end; never edit or
 * reorder released ones.
 */
export interface Migration {
  readonly name: string;
  readonly sql: string;
}
