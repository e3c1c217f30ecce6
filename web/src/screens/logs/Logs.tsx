/** Live server logs from the SSE stream, with a level filter and a search. */
import { t } from '../../i18n/index.ts';
import { useEffect, useRef, useState } from 'react';
import type { LogEntry } from '../../api/types.ts';
import { useAuth } from '../../auth.tsx';
import { ErrorMessage, Field, PageHeader, Select } from '../../components/ui.tsx';
import { sseEvents } from '../../lib/sse.ts';
import { useDebounced } from '../../useDebounced.ts';

const LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'];
const KEEP = 500;

type StreamState = 'connecting' | 'live' | 'paused' | 'closed';

/** An entry with the number it arrived as: the stream's entries carry no id, and they are shown newest first. */
interface Received {
  readonly seq: number;
  readonly entry: LogEntry;
}
let lastSeq = 0;

export function Logs() {
  const { api } = useAuth();
  const [level, setLevel] = useState('INFO');
  const [searchText, setSearchText] = useState('');
  const search = useDebounced(searchText.trim(), 300);
  const [entries, setEntries] = useState<Received[]>([]);
  const [state, setState] = useState<StreamState>('connecting');
  const [paused, setPaused] = useState(false);
  const [error, setError] = useState<unknown>();
  const pending = useRef<Received[]>([]);

  useEffect(() => {
    if (paused) {
      setState('paused');
      return;
    }
    const abort = new AbortController();
    setEntries([]);
    setError(undefined);
    setState('connecting');
    // Entries arrive in bursts (the backlog first): render them in batches.
    const flush = window.setInterval(() => {
      if (pending.current.length === 0) return;
      const batch = pending.current;
      pending.current = [];
      setEntries((old) => [...batch.reverse(), ...old].slice(0, KEEP));
    }, 200);
    (async () => {
      try {
        const response = await api.logStream({ level, search: search || undefined }, abort.signal);
        setState('live');
        for await (const event of sseEvents(response.body!)) {
          try {
            pending.current.push({ seq: ++lastSeq, entry: JSON.parse(event.data) as LogEntry });
          } catch {
            /* not an entry */
          }
        }
        setState('closed');
      } catch (e) {
        if (abort.signal.aborted) return;
        setError(e);
        setState('closed');
      }
    })();
    return () => {
      abort.abort();
      window.clearInterval(flush);
      pending.current = [];
    };
  }, [api, level, search, paused]);

  return (
    <>
      <PageHeader title={t('logs.logs')} description={t('logs.theServiceSLog')} />
      <form className="toolbar" onSubmit={(e) => e.preventDefault()} aria-label={t('logs.filterLogs')}>
        <Select label={t('logs.lowestLevel')} value={level} onChange={setLevel} options={LEVELS} />
        <Field label={t('logs.search')} value={searchText} onChange={setSearchText} type="search" />
        <button type="button" onClick={() => setPaused(!paused)} aria-pressed={paused}>
          {paused ? t('logs.resume') : t('logs.pause')}
        </button>
        <button type="button" onClick={() => setEntries([])}>
          {t('logs.clear')}
        </button>
        <p className="muted" role="status">
          {t('logs.stream', { state })}
          {state === 'live' ? ` · ${entries.length} entries` : ''}
        </p>
      </form>
      <ErrorMessage error={error} title={t('logs.theLogStreamStopped')} />
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: the log scrolls inside its box and holds nothing focusable, so keyboard users need to focus it to scroll it (WCAG 2.1.1; axe scrollable-region-focusable) */}
      <div className="log-view" role="log" aria-label={t('logs.logEntries')} tabIndex={0}>
        {entries.length === 0 ? (
          <p className="muted">
            {t('logs.noEntriesYet')}
            {state === 'live' ? ': waiting for new ones…' : '.'}
          </p>
        ) : (
          <table className="compact logs">
            <thead>
              <tr>
                <th scope="col">{t('logs.time')}</th>
                <th scope="col">{t('logs.level')}</th>
                <th scope="col">{t('logs.message')}</th>
              </tr>
            </thead>
            <tbody>
              {entries.map(({ seq, entry }) => {
                const { timestamp, level: lvl, message, ...rest } = entry;
                const extra = Object.entries(rest).filter(([k]) => k !== 'hostname' && k !== 'pid');
                return (
                  <tr key={seq} className={`level-${String(lvl).toLowerCase()}`}>
                    <td className="nowrap">{new Date(timestamp).toLocaleTimeString()}</td>
                    <td>
                      <span className={`level level-${String(lvl).toLowerCase()}`}>{lvl}</span>
                    </td>
                    <td>
                      {message}
                      {extra.length > 0 && (
                        <div className="muted small">
                          {extra.map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' · ')}
                        </div>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
      </div>
    </>
  );
}
