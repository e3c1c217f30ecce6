/**
 * Small form parts over a JSON document: the forms above the JSON editor (LLM tasks, agents' memory settings) read
 * the document text and write the changed document back into it, so saving works as for any JSON edit.
 */
import { useId, type ReactNode } from 'react';
import { t } from '../../i18n/index.ts';

export type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The document parsed, or undefined while its text is not a JSON object. */
export function parseDocument(text: string): Json | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Sets a field, or removes it when the value is undefined (so a cleared field falls back to its default). */
export function withField(object: Json, name: string, value: unknown): Json {
  const copy = { ...object };
  if (value === undefined) delete copy[name];
  else copy[name] = value;
  return copy;
}

export function Checkbox({
  label,
  checked,
  onChange,
  disabled,
  hint,
}: {
  label: ReactNode;
  checked: boolean;
  onChange: (checked: boolean) => void;
  disabled?: boolean;
  hint?: string;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id} className="check">
        <input
          id={id}
          type="checkbox"
          checked={checked}
          disabled={disabled}
          onChange={(e) => onChange(e.target.checked)}
          aria-describedby={hint ? `${id}-hint` : undefined}
        />{' '}
        {label}
      </label>
      {hint && (
        <small id={`${id}-hint`} className="muted">
          {hint}
        </small>
      )}
    </div>
  );
}

/** A number input; empty means "not set" (undefined). */
export function NumberInput({
  label,
  value,
  onChange,
  disabled,
  step,
  hint,
}: {
  label: string;
  value: unknown;
  onChange: (value: number | undefined) => void;
  disabled?: boolean;
  step?: string;
  hint?: string;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        type="number"
        step={step ?? '1'}
        value={typeof value === 'number' ? String(value) : ''}
        disabled={disabled}
        aria-describedby={hint ? `${id}-hint` : undefined}
        onChange={(e) => onChange(e.target.value === '' ? undefined : Number(e.target.value))}
      />
      {hint && (
        <small id={`${id}-hint`} className="muted">
          {hint}
        </small>
      )}
    </div>
  );
}

export function TextInput({
  label,
  value,
  onChange,
  disabled,
  hint,
}: {
  label: string;
  value: unknown;
  onChange: (value: string | undefined) => void;
  disabled?: boolean;
  hint?: string;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        type="text"
        value={typeof value === 'string' ? value : ''}
        disabled={disabled}
        aria-describedby={hint ? `${id}-hint` : undefined}
        onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value)}
      />
      {hint && (
        <small id={`${id}-hint`} className="muted">
          {hint}
        </small>
      )}
    </div>
  );
}

/** A select whose first option ("default") means "not set". */
export function ChoiceInput({
  label,
  value,
  options,
  onChange,
  disabled,
  defaultLabel = t('configForm.default'),
}: {
  label: string;
  value: unknown;
  options: readonly string[];
  onChange: (value: string | undefined) => void;
  disabled?: boolean;
  defaultLabel?: string;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select
        id={id}
        value={typeof value === 'string' ? value : ''}
        disabled={disabled}
        onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value)}
      >
        <option value="">({defaultLabel})</option>
        {options.map((option) => (
          <option key={option} value={option}>
            {option}
          </option>
        ))}
      </select>
    </div>
  );
}

/** Checkboxes choosing a subset of `options`; an empty choice is written as "not set" (undefined). */
export function SubsetInput({
  legend,
  options,
  value,
  onChange,
  disabled,
  hint,
}: {
  legend: string;
  options: readonly string[];
  value: unknown;
  onChange: (value: string[] | undefined) => void;
  disabled?: boolean;
  hint?: string;
}) {
  const chosen = new Set(Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);
  return (
    <fieldset className="subset">
      <legend>{legend}</legend>
      {hint && <p className="muted small">{hint}</p>}
      {options.map((option) => (
        <Checkbox
          key={option}
          label={option}
          checked={chosen.has(option)}
          disabled={disabled}
          onChange={(on) => {
            const next = options.filter((o) => (o === option ? on : chosen.has(o)));
            onChange(next.length === 0 ? undefined : next);
          }}
        />
      ))}
    </fieldset>
  );
}
