/**
 * Forms for an LLM configuration's tasks, above its JSON: the tools the model may call (built-in, HTTP-call sets,
 * the workflow's MCP servers, peer agents over A2A, the memory tools) and the model cascade with its steps.
 * Every change is written into the document; the JSON stays the whole truth (fields without a form stay as they are).
 */
import { Field, Notice } from '../../components/ui.tsx';
import { t } from '../../i18n/index.ts';
import {
  Checkbox,
  ChoiceInput,
  isObject,
  type Json,
  NumberInput,
  parseDocument,
  SubsetInput,
  TextInput,
  withField,
} from './config-form.tsx';

const BUILT_IN_TOOLS = [
  'calculator',
  'datetime',
  'dataformatter',
  'webscraper',
  'textsummarizer',
  'fetch_page',
  'usermemory',
] as const;
const STRATEGIES = ['structured_output', 'validator', 'failure'] as const;

const pretty = (value: unknown) => JSON.stringify(value, null, 2);
const objects = (value: unknown): Json[] => (Array.isArray(value) ? value.filter(isObject) : []);

export function LlmForm({
  text,
  onChange,
  readOnly,
}: {
  text: string;
  onChange: (text: string) => void;
  readOnly: boolean;
}) {
  const document = parseDocument(text);
  if (!document) return <Notice kind="warning">{t('llmForm.invalidJson')}</Notice>;
  const tasks = objects(document.tasks);
  const setTask = (index: number, task: Json) => {
    const next = [...tasks];
    next[index] = task;
    onChange(pretty({ ...document, tasks: next }));
  };
  if (tasks.length === 0) return <Notice>{t('llmForm.noTasks')}</Notice>;
  return (
    <div className="llm-forms">
      {tasks.map((task, index) => (
        <TaskForm
          // biome-ignore lint/suspicious/noArrayIndexKey: tasks have no other identity while being edited
          key={index}
          task={task}
          index={index}
          readOnly={readOnly}
          onChange={(next) => setTask(index, next)}
        />
      ))}
    </div>
  );
}

function TaskForm({
  task,
  index,
  readOnly,
  onChange,
}: {
  task: Json;
  index: number;
  readOnly: boolean;
  onChange: (task: Json) => void;
}) {
  const name = typeof task.id === 'string' ? task.id : `tasks[${index}]`;
  const set = (field: string, value: unknown) => onChange(withField(task, field, value));
  const headingId = `llm-task-${index}`;
  return (
    <section className="panel" aria-labelledby={headingId} data-testid={`llm-task-form-${index}`}>
      <h2 id={headingId}>{t('llmForm.task', { name })}</h2>
      <ToolsForm task={task} set={set} readOnly={readOnly} />
      <CascadeForm task={task} set={set} readOnly={readOnly} />
    </section>
  );
}

type Setter = (field: string, value: unknown) => void;

function ToolsForm({ task, set, readOnly }: { task: Json; set: Setter; readOnly: boolean }) {
  const httpSets = Array.isArray(task.tools) ? task.tools.filter((t): t is string => typeof t === 'string') : [];
  const peers = objects(task.a2aAgents);
  const setPeers = (next: Json[]) => set('a2aAgents', next.length === 0 ? undefined : next);
  return (
    <fieldset>
      <legend>{t('llmForm.tools')}</legend>
      <Checkbox
        label={t('llmForm.builtInTools')}
        checked={task.enableBuiltInTools === true}
        disabled={readOnly}
        onChange={(on) => set('enableBuiltInTools', on ? true : undefined)}
      />
      <SubsetInput
        legend={t('llmForm.builtInToolsOffered')}
        hint={t('llmForm.builtInToolsOfferedHint')}
        options={BUILT_IN_TOOLS}
        value={task.builtInToolsWhitelist}
        disabled={readOnly || task.enableBuiltInTools !== true}
        onChange={(value) => set('builtInToolsWhitelist', value)}
      />
      <Field
        label={t('llmForm.httpCallTools')}
        multiline
        value={httpSets.join('\n')}
        onChange={(value) => {
          const lines = value
            .split('\n')
            .map((line) => line.trim())
            .filter(Boolean);
          set('tools', lines.length === 0 ? undefined : lines);
        }}
        hint={t('llmForm.httpCallToolsHint')}
      />
      <Checkbox
        label={t('llmForm.mcpCallTools')}
        checked={task.enableMcpCallTools !== false}
        disabled={readOnly}
        onChange={(on) => set('enableMcpCallTools', on ? undefined : false)}
      />
      <fieldset>
        <legend>{t('llmForm.peers')}</legend>
        {peers.map((peer, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: rows have no other identity while being edited
          <div className="grid-2" key={i}>
            <TextInput
              label={t('llmForm.peerUrl', { number: i + 1 })}
              value={peer.url}
              disabled={readOnly}
              onChange={(url) => setPeers(peers.map((p, j) => (j === i ? { ...p, url: url ?? '' } : p)))}
            />
            <TextInput
              label={t('llmForm.peerName', { number: i + 1 })}
              value={peer.name}
              disabled={readOnly}
              onChange={(value) => setPeers(peers.map((p, j) => (j === i ? withField(p, 'name', value) : p)))}
            />
            {!readOnly && (
              <button type="button" onClick={() => setPeers(peers.filter((_, j) => j !== i))}>
                {t('llmForm.removePeer', { number: i + 1 })}
              </button>
            )}
          </div>
        ))}
        {!readOnly && (
          <button type="button" onClick={() => setPeers([...peers, { url: '' }])}>
            {t('llmForm.addPeer')}
          </button>
        )}
      </fieldset>
    </fieldset>
  );
}

function CascadeForm({ task, set, readOnly }: { task: Json; set: Setter; readOnly: boolean }) {
  const cascade = isObject(task.modelCascade) ? task.modelCascade : undefined;
  const steps = objects(cascade?.steps);
  const setCascade = (field: string, value: unknown) =>
    set('modelCascade', withField(cascade ?? { steps: [] }, field, value));
  const setStep = (i: number, step: Json) =>
    setCascade(
      'steps',
      steps.map((s, j) => (j === i ? step : s)),
    );
  const validator = isObject(cascade?.validator) ? cascade.validator : undefined;
  return (
    <fieldset>
      <legend>{t('llmForm.cascade')}</legend>
      <Checkbox
        label={t('llmForm.cascadeEnabled')}
        checked={cascade !== undefined && cascade.enabled !== false}
        disabled={readOnly}
        onChange={(on) =>
          set(
            'modelCascade',
            on
              ? withField(cascade ?? { steps: [{ type: task.type, parameters: {} }] }, 'enabled', undefined)
              : undefined,
          )
        }
      />
      {cascade && (
        <>
          <div className="grid-2">
            <ChoiceInput
              label={t('llmForm.evaluationStrategy')}
              value={cascade.evaluationStrategy}
              options={STRATEGIES}
              disabled={readOnly}
              onChange={(value) => setCascade('evaluationStrategy', value)}
            />
            <NumberInput
              label={t('llmForm.maxCostPerRun')}
              step="0.001"
              value={cascade.maxCostPerRun}
              disabled={readOnly}
              onChange={(value) => setCascade('maxCostPerRun', value)}
            />
          </div>
          {cascade.evaluationStrategy === 'validator' && (
            <TextInput
              label={t('llmForm.validatorPattern')}
              value={validator?.pattern}
              disabled={readOnly}
              onChange={(pattern) => {
                const next = withField(validator ?? {}, 'pattern', pattern);
                setCascade('validator', Object.keys(next).length === 0 ? undefined : next);
              }}
            />
          )}
          <ol className="cascade-steps">
            {steps.map((step, i) => {
              const parameters = isObject(step.parameters) ? step.parameters : {};
              return (
                // biome-ignore lint/suspicious/noArrayIndexKey: steps have no other identity while being edited
                <li key={i}>
                  <fieldset>
                    <legend>{t('llmForm.step', { number: i + 1 })}</legend>
                    <div className="grid-2">
                      <TextInput
                        label={t('llmForm.stepType', { number: i + 1 })}
                        value={step.type}
                        disabled={readOnly}
                        onChange={(type) => setStep(i, { ...step, type: type ?? '' })}
                      />
                      <TextInput
                        label={t('llmForm.stepModel', { number: i + 1 })}
                        value={parameters.modelName}
                        disabled={readOnly}
                        onChange={(model) =>
                          setStep(i, { ...step, parameters: withField(parameters, 'modelName', model) })
                        }
                      />
                      <NumberInput
                        label={t('llmForm.stepConfidence', { number: i + 1 })}
                        step="0.05"
                        value={step.confidenceThreshold}
                        disabled={readOnly}
                        onChange={(value) => setStep(i, withField(step, 'confidenceThreshold', value))}
                      />
                      <NumberInput
                        label={t('llmForm.stepTimeout', { number: i + 1 })}
                        value={step.timeoutMs}
                        disabled={readOnly}
                        onChange={(value) => setStep(i, withField(step, 'timeoutMs', value))}
                      />
                    </div>
                    {!readOnly && (
                      <button
                        type="button"
                        onClick={() =>
                          setCascade(
                            'steps',
                            steps.filter((_, j) => j !== i),
                          )
                        }
                      >
                        {t('llmForm.removeStep', { number: i + 1 })}
                      </button>
                    )}
                  </fieldset>
                </li>
              );
            })}
          </ol>
          {!readOnly && (
            <button
              type="button"
              onClick={() => setCascade('steps', [...steps, { type: task.type, parameters: { modelName: '' } }])}
            >
              {t('llmForm.addStep')}
            </button>
          )}
        </>
      )}
    </fieldset>
  );
}
