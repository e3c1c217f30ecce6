/**
 * The agent's persistent-user-memory settings as a form above its JSON: whether its LLM tasks get the memory tools
 * (`enableMemoryTools`) and the `userMemoryConfig` caps and guardrails. Empty fields use the service's defaults.
 */
import { Notice } from '../../components/ui.tsx';
import {
  Checkbox,
  ChoiceInput,
  isObject,
  type Json,
  NumberInput,
  parseDocument,
  SubsetInput,
  withField,
} from './config-form.tsx';

const pretty = (value: unknown) => JSON.stringify(value, null, 2);
const VISIBILITIES = ['self', 'group', 'global'] as const;
const CATEGORIES = ['preference', 'fact', 'context', 'legacy', 'property'] as const;

export function AgentMemoryForm({
  text,
  onChange,
  readOnly,
}: {
  text: string;
  onChange: (text: string) => void;
  readOnly: boolean;
}) {
  const document = parseDocument(text);
  if (!document) return <Notice kind="warning">The form needs a valid JSON document; fix the JSON below.</Notice>;
  const config = isObject(document.userMemoryConfig) ? document.userMemoryConfig : {};
  const guardrails = isObject(config.guardrails) ? config.guardrails : {};
  const write = (next: Json) => onChange(pretty(next));
  const setConfig = (field: string, value: unknown) => {
    const next = withField(config, field, value);
    write(withField(document, 'userMemoryConfig', Object.keys(next).length === 0 ? undefined : next));
  };
  const setGuardrail = (field: string, value: unknown) => {
    const next = withField(guardrails, field, value);
    setConfig('guardrails', Object.keys(next).length === 0 ? undefined : next);
  };
  return (
    <section className="panel" aria-labelledby="memory-form-h" data-testid="agent-memory-form">
      <h2 id="memory-form-h">User memory</h2>
      <Checkbox
        label="Memory tools (rememberFact, recallMemories, searchMemory, forgetFact)"
        hint="Offered to this agent's LLM tasks that have built-in tools."
        checked={document.enableMemoryTools === true}
        disabled={readOnly}
        onChange={(on) => write(withField(document, 'enableMemoryTools', on ? true : undefined))}
      />
      <div className="grid-2">
        <NumberInput
          label="Entries per user (maxEntriesPerUser)"
          value={config.maxEntriesPerUser}
          disabled={readOnly}
          hint="default 500"
          onChange={(value) => setConfig('maxEntriesPerUser', value)}
        />
        <NumberInput
          label="Entries per recall (maxRecallEntries)"
          value={config.maxRecallEntries}
          disabled={readOnly}
          hint="default 50"
          onChange={(value) => setConfig('maxRecallEntries', value)}
        />
        <ChoiceInput
          label="Recall order"
          value={config.recallOrder}
          options={['most_recent', 'most_accessed']}
          disabled={readOnly}
          defaultLabel="default: most_recent"
          onChange={(value) => setConfig('recallOrder', value)}
        />
        <ChoiceInput
          label="At the cap"
          value={config.onCapReached}
          options={['evict_oldest', 'reject']}
          disabled={readOnly}
          defaultLabel="default: evict_oldest"
          onChange={(value) => setConfig('onCapReached', value)}
        />
        <ChoiceInput
          label="Default visibility"
          value={config.defaultVisibility}
          options={VISIBILITIES}
          disabled={readOnly}
          defaultLabel="default: self"
          onChange={(value) => setConfig('defaultVisibility', value)}
        />
      </div>
      <fieldset>
        <legend>Guardrails</legend>
        <div className="grid-2">
          <NumberInput
            label="Longest key"
            value={guardrails.maxKeyLength}
            disabled={readOnly}
            hint="default 100"
            onChange={(value) => setGuardrail('maxKeyLength', value)}
          />
          <NumberInput
            label="Longest value"
            value={guardrails.maxValueLength}
            disabled={readOnly}
            hint="default 1000"
            onChange={(value) => setGuardrail('maxValueLength', value)}
          />
          <NumberInput
            label="Writes per turn"
            value={guardrails.maxWritesPerTurn}
            disabled={readOnly}
            hint="default 10"
            onChange={(value) => setGuardrail('maxWritesPerTurn', value)}
          />
        </div>
        <SubsetInput
          legend="Categories the model may write"
          hint="None chosen: preference, fact, context."
          options={CATEGORIES}
          value={guardrails.allowedCategories}
          disabled={readOnly}
          onChange={(value) => setGuardrail('allowedCategories', value)}
        />
        <SubsetInput
          legend="Visibilities the model may write"
          hint="None chosen: self (the default visibility is always allowed)."
          options={VISIBILITIES}
          value={guardrails.allowedVisibilities}
          disabled={readOnly}
          onChange={(value) => setGuardrail('allowedVisibilities', value)}
        />
        <Checkbox
          label="May replace shared (global) facts other agents wrote"
          checked={guardrails.allowGlobalKeyOverwrite === true}
          disabled={readOnly}
          onChange={(on) => setGuardrail('allowGlobalKeyOverwrite', on ? true : undefined)}
        />
      </fieldset>
    </section>
  );
}
