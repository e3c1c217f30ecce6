/** Small shared pieces: headers, messages, badges, ids, tables, form fields. */
import { type ReactNode, useEffect, useId, useRef, useState } from 'react';
import { ApiError } from '../api/client.ts';
import { t } from '../i18n/index.ts';
import { Link } from '../router.tsx';

export function PageHeader({
  title,
  children,
  description,
}: {
  title: string;
  description?: ReactNode;
  children?: ReactNode;
}) {
  return (
    <header className="page-header">
      <div>
        <h1>{title}</h1>
        {description && <p className="muted">{description}</p>}
      </div>
      {children && <div className="actions">{children}</div>}
    </header>
  );
}

export function describeError(error: unknown): string {
  if (error instanceof ApiError) {
    const where = error.problem.path ? ` (at ${error.problem.path})` : '';
    return `${error.status ? `${error.status} ` : ''}${error.problem.title ?? t('ui.error')}: ${error.problem.detail ?? error.message}${where}`;
  }
  return error instanceof Error ? error.message : String(error);
}

export function ErrorMessage({ error, title }: { error: unknown; title?: string }) {
  if (!error) return null;
  return (
    <div className="message error" role="alert">
      {title && <strong>{title} </strong>}
      {describeError(error)}
    </div>
  );
}

export function Notice({ children, kind = 'info' }: { children: ReactNode; kind?: 'info' | 'success' | 'warning' }) {
  return (
    <div className={`message ${kind}`} role="status">
      {children}
    </div>
  );
}

export function Loading({ label = t('common.loading') }: { label?: string }) {
  return (
    <p className="muted" role="status" aria-live="polite">
      {label}
    </p>
  );
}

/** A button that moves the focus to the first field of the form with `formId` (the next action of an empty list). */
export function FocusFormButton({ formId, children }: { formId: string; children: ReactNode }) {
  const focus = () => {
    const form = document.getElementById(formId);
    form?.scrollIntoView?.({ block: 'nearest' });
    form?.querySelector<HTMLElement>('input, select, textarea')?.focus();
  };
  return (
    <button type="button" className="link" onClick={focus}>
      {children}
    </button>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="empty">{children}</p>;
}

const badgeKinds: Record<string, string> = {
  READY: 'ok',
  UP: 'ok',
  IN_PROGRESS: 'busy',
  ERROR: 'bad',
  DOWN: 'bad',
  NOT_FOUND: 'none',
  ENDED: 'none',
  EXECUTION_INTERRUPTED: 'warn',
  CREATE: 'ok',
  UPDATE: 'busy',
  SKIP: 'none',
  OK: 'ok',
  RUNNING: 'busy',
  FAILED: 'bad',
  SKIPPED: 'warn',
  PENDING: 'busy',
  PROCESSING: 'busy',
  DONE: 'ok',
};

export function Badge({ status, label }: { status: string; label?: string }) {
  return <span className={`badge badge-${badgeKinds[status] ?? 'none'}`}>{label ?? status.replace(/_/g, ' ')}</span>;
}

export function formatTime(value: number | string | undefined): string {
  if (value === undefined) return '';
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? String(value) : date.toLocaleString();
}

export function shortId(id: string): string {
  return id.length > 10 ? `…${id.slice(-8)}` : id;
}

/**
 * A long id shortened (`…d39503a`), the full value on hover and for screen readers, with a button that copies it.
 * `what` names it in the button's label ("agent id").
 */
export function Id({ value, what = t('id.default') }: { value: string; what?: string }) {
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) return;
    const timer = setTimeout(() => setCopied(false), 2_000);
    return () => clearTimeout(timer);
  }, [copied]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied(true);
    } catch {
      // No clipboard (an insecure origin): the full value stays in the title and the accessible name.
    }
  };
  const short = shortId(value);
  return (
    <span className="id">
      <code title={value}>
        {short === value ? value : <span aria-hidden="true">{short}</span>}
        {short !== value && <span className="visually-hidden">{value}</span>}
      </code>
      <button
        type="button"
        className="copy"
        onClick={copy}
        aria-label={t('id.copy', { what })}
        title={t('id.copy', { what })}
      >
        <svg aria-hidden="true" viewBox="0 0 16 16" width="14" height="14">
          <rect x="5" y="5" width="9" height="9" rx="1.5" fill="none" stroke="currentColor" strokeWidth="1.5" />
          <path d="M3 11V3.5A1.5 1.5 0 0 1 4.5 2H11" fill="none" stroke="currentColor" strokeWidth="1.5" />
        </svg>
      </button>
      <span className="copied" role="status">
        {copied ? t('id.copied') : ''}
      </span>
    </span>
  );
}

/**
 * Something shown by its name (a link when `to` is given; a placeholder when it has none) with its short id beside it.
 */
export function Named({
  name,
  id,
  unnamed,
  what,
  to,
}: {
  name?: string;
  id: string;
  unnamed: string;
  what?: string;
  to?: string;
}) {
  const label = name || <span className="unnamed">{unnamed}</span>;
  return (
    <span className="named">
      {to ? <Link to={to}>{label}</Link> : label} <Id value={id} what={what} />
    </span>
  );
}

/**
 * A table that never widens the page: on narrow screens it scrolls inside its own (focusable, labelled) box, or,
 * with `stack`, each row becomes a card whose cells carry their column's name (`data-label`).
 */
export function TableBox({ label, stack, children }: { label: string; stack?: boolean; children: ReactNode }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a box that can scroll sideways must be reachable by keyboard to be scrolled
    <section className={`table-box${stack ? ' stack' : ''}`} aria-label={t('table.box', { label })} tabIndex={0}>
      {children}
    </section>
  );
}

interface FieldProps {
  label: string;
  value: string;
  onChange: (value: string) => void;
  type?: string;
  hint?: ReactNode;
  error?: string;
  required?: boolean;
  multiline?: boolean;
  placeholder?: string;
  autoComplete?: string;
  name?: string;
}

/** A labelled input with its hint and error tied to it for screen readers. */
export function Field({
  label,
  value,
  onChange,
  type = 'text',
  hint,
  error,
  required,
  multiline,
  placeholder,
  autoComplete,
  name,
}: FieldProps) {
  const id = useId();
  const describedBy = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  const common = {
    id,
    value,
    required,
    placeholder,
    name,
    autoComplete,
    'aria-invalid': error ? true : undefined,
    'aria-describedby': describedBy,
  };
  return (
    <div className="field">
      <label htmlFor={id}>
        {label}
        {required && <span aria-hidden="true"> *</span>}
      </label>
      {multiline ? (
        <textarea {...common} rows={3} onChange={(e) => onChange(e.target.value)} />
      ) : (
        <input {...common} type={type} onChange={(e) => onChange(e.target.value)} />
      )}
      {hint && (
        <small id={`${id}-hint`} className="muted">
          {hint}
        </small>
      )}
      {error && (
        <small id={`${id}-error`} className="field-error">
          {error}
        </small>
      )}
    </div>
  );
}

export function Select({
  label,
  value,
  onChange,
  options,
  hint,
}: {
  label: string;
  value: string;
  onChange: (v: string) => void;
  options: readonly (string | { value: string; label: string })[];
  hint?: string;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select
        id={id}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        aria-describedby={hint ? `${id}-hint` : undefined}
      >
        {options.map((o) => {
          const opt = typeof o === 'string' ? { value: o, label: o } : o;
          return (
            <option key={opt.value} value={opt.value}>
              {opt.label}
            </option>
          );
        })}
      </select>
      {hint && (
        <small id={`${id}-hint`} className="muted">
          {hint}
        </small>
      )}
    </div>
  );
}

/**
 * A button that asks again before a destructive action. The question replaces the button, so focus moves to its
 * "Yes" (the button the user was on is gone) and, once answered, back to the button; Escape answers "No".
 */
export function ConfirmButton({
  children,
  onConfirm,
  disabled,
  question,
}: {
  children: ReactNode;
  onConfirm: () => void;
  disabled?: boolean;
  question: string;
}) {
  const [asking, setAsking] = useState(false);
  const trigger = useRef<HTMLButtonElement>(null);
  const yes = useRef<HTMLButtonElement>(null);
  const answered = useRef(false);
  useEffect(() => {
    if (asking) yes.current?.focus();
    else if (answered.current) {
      answered.current = false;
      trigger.current?.focus();
    }
  }, [asking]);
  const answer = (confirmed: boolean) => {
    answered.current = true;
    setAsking(false);
    if (confirmed) onConfirm();
  };

  if (!asking) {
    return (
      <button ref={trigger} type="button" className="danger" disabled={disabled} onClick={() => setAsking(true)}>
        {children}
      </button>
    );
  }
  return (
    <fieldset
      className="confirm"
      onKeyDown={(e) => {
        if (e.key === 'Escape') answer(false);
      }}
    >
      <legend>{question}</legend>
      <button ref={yes} type="button" className="danger" onClick={() => answer(true)}>
        {t('ui.yes')}
      </button>
      <button type="button" onClick={() => answer(false)}>
        {t('ui.no')}
      </button>
    </fieldset>
  );
}

/** Saves a Blob as a file through a temporary link. */
export function saveBlob(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
