/** Version history of a resource with a line diff of two versions' pretty JSON. */
import { t } from '../../i18n/index.ts';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useAuth } from '../../auth.tsx';
import { ErrorMessage } from '../../components/ui.tsx';
import { diffSummary, lineDiff } from '../../lib/diff.ts';

export function VersionDiff({ storePath, id, current }: { storePath: string; id: string; current: number }) {
  const { api } = useAuth();
  const [from, setFrom] = useState(Math.max(1, current - 1));
  const [to, setTo] = useState(current);
  const read = (v: number) => ({ queryKey: ['resource', storePath, id, v], queryFn: () => api.read(storePath, id, v) });
  const a = useQuery(read(from));
  const b = useQuery(read(to));
  const versions = Array.from({ length: current }, (_, i) => current - i);
  const lines =
    a.data !== undefined && b.data !== undefined
      ? lineDiff(JSON.stringify(a.data, null, 2), JSON.stringify(b.data, null, 2))
      : undefined;
  const summary = lines && diffSummary(lines);

  return (
    <section className="panel" aria-labelledby="versions-h">
      <h2 id="versions-h">{t('versionDiff.versionHistory')}</h2>
      <p className="muted">
        {t('versionDiff.version', { current })}
        {current === 1 ? '' : 's'}
        {t('versionDiff.everySaveCreatesA')}
      </p>
      <div className="toolbar">
        <div className="field narrow">
          <label htmlFor="diff-from">{t('versionDiff.compareVersion')}</label>
          <select id="diff-from" value={from} onChange={(e) => setFrom(Number(e.target.value))}>
            {versions.map((v) => (
              <option key={v} value={v}>
                {v}
              </option>
            ))}
          </select>
        </div>
        <div className="field narrow">
          <label htmlFor="diff-to">{t('versionDiff.withVersion')}</label>
          <select id="diff-to" value={to} onChange={(e) => setTo(Number(e.target.value))}>
            {versions.map((v) => (
              <option key={v} value={v}>
                {v}
              </option>
            ))}
          </select>
        </div>
        {summary && (
          <p role="status" className="muted">
            {summary.added === 0 && summary.removed === 0
              ? t('versionDiff.noDifferences')
              : `${summary.added} lines added, ${summary.removed} removed.`}
          </p>
        )}
      </div>
      <ErrorMessage error={a.error ?? b.error} />
      {lines && (
        <figure className="diff-figure">
          <figcaption className="visually-hidden">
            {t('versionDiff.differencesBetweenVersionAnd', { from, to })}
          </figcaption>
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: the diff scrolls in its own box, which keyboard users must reach to scroll it */}
          <pre className="diff" tabIndex={0}>
            {lines.map((l, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: the diff is computed once per pair of versions and its lines (which may repeat) are never reordered
              <div key={i} className={`diff-${l.kind}`}>
                <span className="diff-sign" aria-hidden="true">
                  {l.kind === 'added' ? '+' : l.kind === 'removed' ? '−' : ' '}
                </span>
                {l.kind !== 'same' && <span className="visually-hidden">{l.kind}: </span>}
                {l.text}
              </div>
            ))}
          </pre>
        </figure>
      )}
    </section>
  );
}
