/**
 * The agent's persistent-user-memory settings as a form above its JSON: whether its LLM tasks get the memory tools
 * (`enableMemoryTools`) and the `userMemoryConfig` caps and guardrails. Empty fields use the service's defaults.
 */
import { Notice } from '../../components/ui.tsx';
import { t } from '../../i18n/index.ts';
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
  if (!document) return <Notice kind="warning">{t('agentMemoryForm.invalidJson')}</Notice>;
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
      <h2 id="memory-form-h">{t('nav.userMemory')}</h2>
      <Checkbox
        label={t('agentMemoryForm.memoryTools')}
        hint={t('agentMemoryForm.memoryToolsHint')}
        checked={document.enableMemoryTools === true}
        disabled={readOnly}
        onChange={(on) => write(withField(document, 'enableMemoryTools', on ? true : undefined))}
      />
      <div className="grid-2">
        <NumberInput
          label={t('agentMemoryForm.maxEntriesPerUser')}
          value={config.maxEntriesPerUser}
          disabled={readOnly}
          hint={t('configForm.defaultValue', { value: 500 })}
          onChange={(value) => setConfig('maxEntriesPerUser', value)}
        />
        <NumberInput
          label={t('agentMemoryForm.maxRecallEntries')}
          value={config.maxRecallEntries}
          disabled={readOnly}
          hint={t('configForm.defaultValue', { value: 50 })}
          onChange={(value) => setConfig('maxRecallEntries', value)}
        />
        <ChoiceInput
          label={t('agentMemoryForm.recallOrder')}
          value={config.recallOrder}
          options={['most_recent', 'most_accessed']}
          disabled={readOnly}
          defaultLabel={t('configForm.defaultChoice', { value: 'most_recent' })}
          onChange={(value) => setConfig('recallOrder', value)}
        />
        <ChoiceInput
          label={t('agentMemoryForm.onCapReached')}
          value={config.onCapReached}
          options={['evict_oldest', 'reject']}
          disabled={readOnly}
          defaultLabel={t('configForm.defaultChoice', { value: 'evict_oldest' })}
          onChange={(value) => setConfig('onCapReached', value)}
        />
        <ChoiceInput
          label={t('agentMemoryForm.defaultVisibility')}
          value={config.defaultVisibility}
          options={VISIBILITIES}
          disabled={readOnly}
          defaultLabel={t('configForm.defaultChoice', { value: 'self' })}
          onChange={(value) => setConfig('defaultVisibility', value)}
        />
      </div>
      <fieldset>
        <legend>{t('agentMemoryForm.guardrails')}</legend>
        <div className="grid-2">
          <NumberInput
            label={t('agentMemoryForm.maxKeyLength')}
            value={guardrails.maxKeyLength}
            disabled={readOnly}
            hint={t('configForm.defaultValue', { value: 100 })}
            onChange={(value) => setGuardrail('maxKeyLength', value)}
          />
          <NumberInput
            label={t('agentMemoryForm.maxValueLength')}
            value={guardrails.maxValueLength}
            disabled={readOnly}
            hint={t('configForm.defaultValue', { value: 1000 })}
            onChange={(value) => setGuardrail('maxValueLength', value)}
          />
          <NumberInput
            label={t('agentMemoryForm.maxWritesPerTurn')}
            value={guardrails.maxWritesPerTurn}
            disabled={readOnly}
            hint={t('configForm.defaultValue', { value: 10 })}
            onChange={(value) => setGuardrail('maxWritesPerTurn', value)}
          />
        </div>
        <SubsetInput
          legend={t('agentMemoryForm.allowedCategories')}
          hint={t('agentMemoryForm.allowedCategoriesHint')}
          options={CATEGORIES}
          value={guardrails.allowedCategories}
          disabled={readOnly}
          onChange={(value) => setGuardrail('allowedCategories', value)}
        />
        <SubsetInput
          legend={t('agentMemoryForm.allowedVisibilities')}
          hint={t('agentMemoryForm.allowedVisibilitiesHint')}
          options={VISIBILITIES}
          value={guardrails.allowedVisibilities}
          disabled={readOnly}
          onChange={(value) => setGuardrail('allowedVisibilities', value)}
        />
        <Checkbox
          label={t('agentMemoryForm.allowGlobalKeyOverwrite')}
          checked={guardrails.allowGlobalKeyOverwrite === true}
          disabled={readOnly}
          onChange={(on) => setGuardrail('allowGlobalKeyOverwrite', on ? true : undefined)}
        />
      </fieldset>
    </section>
  );
}
