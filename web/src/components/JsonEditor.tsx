/**
 * A CodeMirror 6 JSON editor that shows issues at their line: a marker in the gutter, the line highlighted,
 * and a list below whose entries move the cursor there. The issues come from the caller (a local parse error
 * from lib/json-locate.ts, or a server problem mapped to its line).
 */
import { t } from '../i18n/index.ts';
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { HighlightStyle, bracketMatching, syntaxHighlighting } from '@codemirror/language';
import { json } from '@codemirror/lang-json';
import { EditorState, RangeSet, StateEffect, StateField, type Extension } from '@codemirror/state';
import {
  Decoration,
  EditorView,
  GutterMarker,
  gutter,
  highlightActiveLine,
  highlightActiveLineGutter,
  keymap,
  lineNumbers,
  type DecorationSet,
} from '@codemirror/view';
import { tags } from '@lezer/highlight';
import { useEffect, useId, useRef } from 'react';
import type { JsonIssue } from '../lib/json-locate.ts';

const setIssues = StateEffect.define<readonly JsonIssue[]>();

class IssueMarker extends GutterMarker {
  readonly message: string;
  constructor(message: string) {
    super();
    this.message = message;
  }
  override toDOM() {
    const span = document.createElement('span');
    span.className = 'cm-issue-marker';
    span.textContent = '●';
    span.title = this.message;
    return span;
  }
}

interface IssueState {
  readonly lines: DecorationSet;
  readonly markers: RangeSet<GutterMarker>;
}

function buildIssueState(state: EditorState, issues: readonly JsonIssue[]): IssueState {
  const byLine = new Map<number, string[]>();
  for (const issue of issues) {
    const line = Math.min(Math.max(issue.line, 1), state.doc.lines);
    byLine.set(line, [...(byLine.get(line) ?? []), issue.message]);
  }
  const sorted = [...byLine.entries()].sort((a, b) => a[0] - b[0]);
  const lines = Decoration.set(
    sorted.map(([n]) => Decoration.line({ class: 'cm-issue-line' }).range(state.doc.line(n).from)),
  );
  const markers = RangeSet.of(
    sorted.map(([n, messages]) => new IssueMarker(messages.join('\n')).range(state.doc.line(n).from)),
  );
  return { lines, markers };
}

const issueField = StateField.define<IssueState>({
  create: () => ({ lines: Decoration.none, markers: RangeSet.empty }),
  update(value, tr) {
    for (const effect of tr.effects) if (effect.is(setIssues)) return buildIssueState(tr.state, effect.value);
    // Edits invalidate the markers until the caller recomputes them.
    return tr.docChanged ? { lines: value.lines.map(tr.changes), markers: value.markers.map(tr.changes) } : value;
  },
  provide: (field) => EditorView.decorations.from(field, (v) => v.lines),
});

const issueGutter = gutter({ class: 'cm-issue-gutter', markers: (view) => view.state.field(issueField).markers });

const theme = EditorView.theme({
  '&': { fontSize: '14px', border: '1px solid var(--border)', borderRadius: '6px', background: 'var(--surface)' },
  '&.cm-focused': { outline: '3px solid var(--focus)', outlineOffset: '1px' },
  '.cm-content': { fontFamily: 'var(--mono)', caretColor: 'var(--text)' },
  '.cm-gutters': { background: 'var(--surface-2)', color: 'var(--muted)', borderRight: '1px solid var(--border)' },
  '.cm-issue-line': { background: 'var(--error-bg)' },
  '.cm-issue-marker': { color: 'var(--error)', padding: '0 2px', cursor: 'help' },
  '.cm-activeLine': { background: 'var(--active-line)' },
});

/** JSON's tokens in the theme's colours (CSS variables), so they stay readable in light and dark mode. */
const jsonHighlight = HighlightStyle.define([
  { tag: tags.propertyName, color: 'var(--code-key)' },
  { tag: tags.string, color: 'var(--code-string)' },
  { tag: [tags.number, tags.bool, tags.null], color: 'var(--code-literal)' },
  { tag: tags.invalid, color: 'var(--error)' },
]);

export interface JsonEditorProps {
  readonly label: string;
  readonly value: string;
  readonly onChange?: (value: string) => void;
  readonly issues?: readonly JsonIssue[];
  readonly readOnly?: boolean;
  readonly minHeight?: string;
}

export function JsonEditor({
  label,
  value,
  onChange,
  issues = [],
  readOnly = false,
  minHeight = '16rem',
}: JsonEditorProps) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const onChangeRef = useRef(onChange);
  onChangeRef.current = onChange;
  // The editor starts from the latest text when it is (re)created; later changes are pushed in by the effect below.
  const valueRef = useRef(value);
  valueRef.current = value;
  const id = useId();

  useEffect(() => {
    const extensions: Extension[] = [
      lineNumbers(),
      history(),
      // Tab indents inside the editor; Escape then Tab leaves it (CodeMirror's accessible tab handling).
      keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
      issueGutter,
      highlightActiveLineGutter(),
      highlightActiveLine(),
      json(),
      syntaxHighlighting(jsonHighlight),
      bracketMatching(),
      issueField,
      theme,
      EditorView.theme({ '.cm-content, .cm-gutter': { minHeight } }),
      EditorView.lineWrapping,
      EditorState.readOnly.of(readOnly),
      EditorView.editable.of(!readOnly),
      EditorView.contentAttributes.of({
        'aria-label': label,
        'aria-describedby': `${id}-issues`,
        'aria-multiline': 'true',
        role: 'textbox',
      }),
      EditorView.updateListener.of((update) => {
        if (update.docChanged) onChangeRef.current?.(update.state.doc.toString());
      }),
    ];
    const editor = new EditorView({
      state: EditorState.create({ doc: valueRef.current, extensions }),
      parent: host.current!,
    });
    view.current = editor;
    return () => {
      editor.destroy();
      view.current = null;
    };
    // The editor is created once per label/readOnly/height; value and issues are pushed in by the effects below.
  }, [label, readOnly, minHeight, id]);

  useEffect(() => {
    const editor = view.current;
    if (editor && editor.state.doc.toString() !== value) {
      editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: value } });
    }
  }, [value]);

  useEffect(() => {
    view.current?.dispatch({ effects: setIssues.of(issues) });
  }, [issues]);

  const goTo = (issue: JsonIssue) => {
    const editor = view.current;
    if (!editor) return;
    const line = editor.state.doc.line(Math.min(Math.max(issue.line, 1), editor.state.doc.lines));
    const pos = Math.min(line.from + Math.max(issue.column - 1, 0), line.to);
    editor.dispatch({ selection: { anchor: pos }, scrollIntoView: true });
    editor.focus();
  };

  return (
    <div className="json-editor">
      <div ref={host} />
      <div id={`${id}-issues`} aria-live="polite">
        {issues.length > 0 && (
          <ul className="issues">
            {issues.map((issue) => (
              <li key={`${issue.offset}:${issue.message}`}>
                <button type="button" className="link" onClick={() => goTo(issue)}>
                  {t('jsonEditor.line', { line: issue.line })}
                </button>
                : {issue.message}
              </li>
            ))}
          </ul>
        )}
      </div>
    </div>
  );
}
