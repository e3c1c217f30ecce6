/** The resources of one kind: search, open, create. */
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useResourceKinds } from '../../api/resources.ts';
import { useAuth, usePermissions } from '../../auth.tsx';
import { Empty, ErrorMessage, Field, Loading, PageHeader, formatTime } from '../../components/ui.tsx';
import { parseResourceUri } from '../../lib/uri.ts';
import { BASE, Link } from '../../router.tsx';
import { useDebounced } from '../../useDebounced.ts';

/** Kinds with a screen of their own; every other kind opens in the JSON editor. */
const OWN_SCREENS = new Set(['transcripts', 'schedules', 'groups']);
const screenOf = (slug: string) => (OWN_SCREENS.has(slug) ? slug : `resources/${slug}`);

export function ResourceList({ kindSlug }: { kindSlug: string }) {
  const { api } = useAuth();
  const { canWrite } = usePermissions();
  const kinds = useResourceKinds();
  const kind = kinds?.bySlug(kindSlug);
  const [search, setSearch] = useState('');
  const filter = useDebounced(search, 250);
  const list = useQuery({
    queryKey: ['descriptors', kind?.storePath, filter],
    queryFn: () => api.descriptors(kind!.storePath, { filter, limit: 200 }),
    enabled: kind !== undefined,
  });
  if (!kinds) return <Loading />;
  if (!kind) return <PageHeader title="Unknown resource type" />;

  return (
    <>
      <PageHeader
        title={kind.label}
        description={
          <>
            Stored at <code>{kind.storePath}</code>. Every save creates a new version.
          </>
        }
      >
        {canWrite && (
          <Link to={`${BASE}/resources/${kind.slug}/new`} className="button primary">
            New {kind.title}
          </Link>
        )}
      </PageHeader>
      <div className="toolbar">
        <Field label={`Search ${kind.label.toLowerCase()}`} value={search} onChange={setSearch} type="search" />
      </div>
      <ErrorMessage error={list.error} />
      {list.isPending ? (
        <Loading />
      ) : list.data?.length === 0 ? (
        <Empty>
          No {kind.label.toLowerCase()} {filter ? `match "${filter}"` : 'yet'}.
        </Empty>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Version</th>
              <th scope="col" className="hide-narrow">
                Modified
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data?.map((d) => {
              const ref = parseResourceUri(d.resource);
              if (!ref) return null;
              return (
                <tr key={ref.id}>
                  <td>
                    <Link to={`${BASE}/${screenOf(kind.slug)}/${ref.id}`}>{d.name || `(unnamed ${kind.title})`}</Link>
                    {d.description && <div className="muted small">{d.description}</div>}
                  </td>
                  <td>{ref.version}</td>
                  <td className="hide-narrow">{formatTime(d.lastModifiedOn)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </>
  );
}
