/** The resources of one kind: search, open, create. */
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useResourceKinds } from '../../api/resources.ts';
import { useAuth, usePermissions } from '../../auth.tsx';
import { t } from '../../i18n/index.ts';
import { Empty, ErrorMessage, Field, Loading, Named, PageHeader, TableBox, formatTime } from '../../components/ui.tsx';
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
  if (!kind) return <PageHeader title={t('resources.unknownKind')} />;

  return (
    <>
      <PageHeader
        title={kind.label}
        description={
          <>
            {t('resources.storedAt')} <code>{kind.storePath}</code>. {t('resources.versions')}
          </>
        }
      >
        {canWrite && (
          <Link to={`${BASE}/resources/${kind.slug}/new`} className="button primary">
            {t('resources.new', { kind: kind.title })}
          </Link>
        )}
      </PageHeader>
      <div className="toolbar">
        <Field
          label={t('resources.search', { kinds: kind.label.toLowerCase() })}
          value={search}
          onChange={setSearch}
          type="search"
        />
      </div>
      <ErrorMessage error={list.error} />
      {list.isPending ? (
        <Loading />
      ) : list.data?.length === 0 ? (
        <Empty>
          {filter ? (
            <>
              {t('resources.noMatch', { kinds: kind.label.toLowerCase(), filter })}{' '}
              <button type="button" className="link" onClick={() => setSearch('')}>
                {t('list.clearSearch')}
              </button>
            </>
          ) : (
            <>
              {t('resources.empty', { kinds: kind.label.toLowerCase() })}{' '}
              {canWrite ? (
                <Link to={`${BASE}/resources/${kind.slug}/new`}>
                  {t('resources.createFirst', { kind: kind.title })}
                </Link>
              ) : (
                <Link to={`${BASE}/agents`}>{t('resources.seeAgents')}</Link>
              )}
            </>
          )}
        </Empty>
      ) : (
        <TableBox label={kind.label} stack>
          <table>
            <thead>
              <tr>
                <th scope="col">{t('list.name')}</th>
                <th scope="col">{t('list.version')}</th>
                <th scope="col">{t('list.modified')}</th>
              </tr>
            </thead>
            <tbody>
              {list.data?.map((d) => {
                const ref = parseResourceUri(d.resource);
                if (!ref) return null;
                return (
                  <tr key={ref.id}>
                    <td data-label={t('list.name')}>
                      <Named
                        name={d.name}
                        id={ref.id}
                        unnamed={t('resources.unnamed', { kind: kind.title })}
                        what={t('id.resource')}
                        to={`${BASE}/${screenOf(kind.slug)}/${ref.id}`}
                      />
                      {d.description && <div className="muted small">{d.description}</div>}
                    </td>
                    <td data-label={t('list.version')}>{ref.version}</td>
                    <td data-label={t('list.modified')}>{formatTime(d.lastModifiedOn)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </TableBox>
      )}
    </>
  );
}
