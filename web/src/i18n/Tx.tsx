/** A message with elements inside it (a link, code): `{name}` placeholders filled with React nodes. */
import { Fragment, type ReactNode } from 'react';
import { type MessageKey, t } from './index.ts';

export function Tx({ k, values }: { k: MessageKey; values: Readonly<Record<string, ReactNode>> }) {
  // The message with no values filled in, split at its placeholders: odd parts are placeholder names.
  const parts = t(k).split(/\{(\w+)\}/);
  return (
    <>
      {parts.map((part, i) =>
        // biome-ignore lint/suspicious/noArrayIndexKey: the parts of a fixed message never move
        i % 2 === 1 ? <Fragment key={i}>{values[part] ?? `{${part}}`}</Fragment> : part,
      )}
    </>
  );
}
