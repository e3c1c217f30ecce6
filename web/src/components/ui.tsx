/** Small shared pieces: headers, messages, badges, form fields. */
import { type ReactNode, useEffect, useId, useRef, useState } from 'react';
import { ApiError } from '../api/client.ts';

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
    return `${error.status ? `${error.status} ` : ''}${error.problem.title ?? 'Error'}: ${error.problem.detail ?? error.message}${where}`;
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

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p className="muted" role="status" aria-live="polite">
      {label}
    </p>
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
        Yes
      </button>
      <button type="button" onClick={() => answer(false)}>
        No
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
