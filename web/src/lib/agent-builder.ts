/**
 * The guided "simple agent" form -> the configuration resources that make it: a dictionary (words -> intents),
 * a behavior set (intent -> action), an output set (action -> reply text, quick replies) and a workflow
 * (parser -> behavior -> output -> templating) referenced by the agent. Pure: the store calls are passed in.
 */

export interface IntentRow {
  /** Intent name, e.g. `greeting`. */
  intent: string;
  /** Comma-separated words or phrases that mean it, e.g. `hello, hi, good morning`. */
  words: string;
}

export interface RuleRow {
  intent: string;
  action: string;
}

export interface ReplyRow {
  action: string;
  text: string;
  /** Comma-separated quick replies offered with the reply. */
  quickReplies: string;
}

export interface SimpleAgentForm {
  name: string;
  description: string;
  /** Said when a conversation starts (empty: nothing). */
  welcome: string;
  intents: IntentRow[];
  rules: RuleRow[];
  replies: ReplyRow[];
  /** Tolerate typos (Damerau-Levenshtein distance 1..2); 0 = off. */
  typoDistance: number;
}

export const exampleForm = (): SimpleAgentForm => ({
  name: t('agentBuilder.greeter'),
  description: t('agentBuilder.saysHelloAndGoodbye'),
  welcome: t('agentBuilder.welcomeSayHello'),
  intents: [
    { intent: 'greeting', words: 'hello, hi, good morning' },
    { intent: 'goodbye', words: 'bye, see you' },
  ],
  rules: [
    { intent: 'greeting', action: 'greet' },
    { intent: 'goodbye', action: 'say_goodbye' },
  ],
  replies: [
    { action: 'greet', text: t('agentBuilder.helloHowCanI'), quickReplies: 'bye' },
    { action: 'say_goodbye', text: t('agentBuilder.goodbyeSeeYouSoon'), quickReplies: '' },
  ],
  typoDistance: 0,
});

export const blankForm = (): SimpleAgentForm => ({
  name: '',
  description: '',
  welcome: '',
  intents: [{ intent: '', words: '' }],
  rules: [{ intent: '', action: '' }],
  replies: [{ action: '', text: '', quickReplies: '' }],
  typoDistance: 0,
});

export interface FormProblem {
  /** Which field, e.g. `intents.0.intent`. */
  readonly field: string;
  readonly message: string;
}

const NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

export function splitList(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** `Good Morning!` -> `good_morning`: the entity inside an expression. */
export function slug(text: string): string {
  const s = text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return s.length > 0 ? s : 'value';
}

const isBlankRow = (row: object) => Object.values(row).every((v) => String(v).trim() === '');

/** What keeps the form from making a working agent; empty when it can be built. */
export function validateForm(form: SimpleAgentForm): FormProblem[] {
  const problems: FormProblem[] = [];
  if (form.name.trim() === '') problems.push({ field: 'name', message: t('agentBuilder.giveTheAgentA') });
  const intents = new Set<string>();
  form.intents.forEach((row, i) => {
    if (isBlankRow(row)) return;
    if (!NAME.test(row.intent.trim()))
      problems.push({
        field: `intents.${i}.intent`,
        message: t('agentBuilder.intentUseLettersDigits', { number: i + 1 }),
      });
    if (intents.has(row.intent.trim()))
      problems.push({
        field: `intents.${i}.intent`,
        message: t('agentBuilder.intentIsListedTwice', { number: i + 1, intent: row.intent.trim() }),
      });
    intents.add(row.intent.trim());
    if (splitList(row.words).length === 0)
      problems.push({ field: `intents.${i}.words`, message: t('agentBuilder.intentListAtLeast', { number: i + 1 }) });
  });
  const actions = new Set<string>();
  form.rules.forEach((row, i) => {
    if (isBlankRow(row)) return;
    if (!intents.has(row.intent.trim()))
      problems.push({ field: `rules.${i}.intent`, message: t('agentBuilder.ruleChooseOneOf', { number: i + 1 }) });
    if (!NAME.test(row.action.trim()))
      problems.push({
        field: `rules.${i}.action`,
        message: t('agentBuilder.ruleNameTheAction', { number: i + 1 }),
      });
    actions.add(row.action.trim());
  });
  form.replies.forEach((row, i) => {
    if (isBlankRow(row)) return;
    if (!actions.has(row.action.trim()))
      problems.push({
        field: `replies.${i}.action`,
        message: t('agentBuilder.replyChooseAnAction', { number: i + 1 }),
      });
    if (row.text.trim() === '')
      problems.push({ field: `replies.${i}.text`, message: t('agentBuilder.replyWriteTheReply', { number: i + 1 }) });
  });
  if (!form.intents.some((r) => !isBlankRow(r)) && form.welcome.trim() === '') {
    problems.push({ field: 'intents.0.intent', message: t('agentBuilder.addAtLeastOne') });
  }
  return problems;
}

export interface SimpleAgentResources {
  readonly dictionary: {
    words: { word: string; expressions: string }[];
    phrases: { phrase: string; expressions: string }[];
  };
  readonly behaviorSet: {
    behaviorGroups: {
      name: string;
      behaviorRules: {
        name: string;
        actions: string[];
        conditions: { type: string; configs: Record<string, string> }[];
      }[];
    }[];
  };
  readonly outputSet: {
    outputSet: {
      action: string;
      timesOccurred: number;
      outputs: { valueAlternatives: { type: 'text'; text: string }[] }[];
      quickReplies?: { value: string; expressions: string }[];
    }[];
  };
  workflow(uris: { dictionary: string; behaviorSet: string; outputSet: string }): {
    packageExtensions: { type: string; config: Record<string, unknown>; extensions?: Record<string, unknown> }[];
  };
  agent(workflowUri: string): { packages: string[] };
}

/** The resource bodies for a valid form (see validateForm). */
export function buildSimpleAgent(form: SimpleAgentForm): SimpleAgentResources {
  const intents = form.intents
    .filter((r) => !isBlankRow(r))
    .map((r) => ({ intent: r.intent.trim(), words: splitList(r.words) }));
  const words: { word: string; expressions: string }[] = [];
  const phrases: { phrase: string; expressions: string }[] = [];
  /** Lower-cased word -> expression, to give quick replies the expression of the word they repeat. */
  const expressionOf = new Map<string, string>();
  for (const { intent, words: list } of intents) {
    for (const w of list) {
      const expressions = `${intent}(${slug(w)})`;
      if (expressionOf.has(w.toLowerCase())) continue;
      expressionOf.set(w.toLowerCase(), expressions);
      if (/\s/.test(w)) phrases.push({ phrase: w, expressions });
      else words.push({ word: w, expressions });
    }
  }

  const rules = form.rules
    .filter((r) => !isBlankRow(r))
    .map((r) => ({ intent: r.intent.trim(), action: r.action.trim() }));
  const behaviorRules = rules.map((r, i) => ({
    name: `${r.intent} -> ${r.action}${rules.findIndex((o) => o.intent === r.intent && o.action === r.action) === i ? '' : ` (${i + 1})`}`,
    actions: [r.action],
    conditions: [{ type: 'inputmatcher', configs: { expressions: `${r.intent}(*)` } }],
  }));

  const text = (t: string) => ({ valueAlternatives: [{ type: 'text' as const, text: t }] });
  const outputSet: SimpleAgentResources['outputSet']['outputSet'] = [];
  if (form.welcome.trim() !== '')
    outputSet.push({ action: 'CONVERSATION_START', timesOccurred: 0, outputs: [text(form.welcome.trim())] });
  for (const r of form.replies.filter((row) => !isBlankRow(row))) {
    const entry: SimpleAgentResources['outputSet']['outputSet'][number] = {
      action: r.action.trim(),
      timesOccurred: 0,
      outputs: [text(r.text.trim())],
    };
    const quickReplies = splitList(r.quickReplies).map((value) => ({
      value,
      expressions: expressionOf.get(value.toLowerCase()) ?? `quickReply(${slug(value)})`,
    }));
    if (quickReplies.length > 0) entry.quickReplies = quickReplies;
    outputSet.push(entry);
  }

  return {
    dictionary: { words, phrases },
    behaviorSet: { behaviorGroups: [{ name: 'Main', behaviorRules }] },
    outputSet: { outputSet },
    workflow: (uris) => ({
      packageExtensions: [
        {
          type: 'svc://ai.svc.parser',
          extensions: {
            dictionaries: [{ type: 'svc://ai.svc.parser.dictionaries.regular', config: { uri: uris.dictionary } }],
            ...(form.typoDistance > 0
              ? {
                  corrections: [
                    { type: 'svc://ai.svc.parser.corrections.levenshtein', config: { distance: form.typoDistance } },
                  ],
                }
              : {}),
          },
          config: {},
        },
        { type: 'svc://ai.svc.behavior', config: { uri: uris.behaviorSet } },
        { type: 'svc://ai.svc.output', config: { uri: uris.outputSet } },
        { type: 'svc://ai.svc.templating', config: {} },
      ],
    }),
    agent: (workflowUri) => ({ packages: [workflowUri] }),
  };
}

/** The store calls the creation needs (the API client in the app, fakes in tests). */
export interface CreationPorts {
  /** Creates a resource of a kind (by its name: `dictionary`, `workflow`, ...) and answers its URI (the Location). */
  create(kind: string, body: unknown): Promise<string>;
  /** Names a resource through its descriptor. */
  describe(uri: string, name: string, description: string): Promise<void>;
}

export interface CreatedAgent {
  readonly agentUri: string;
  readonly created: readonly { readonly kind: string; readonly uri: string }[];
}

/** Creates the resources in dependency order and names each after the agent. Progress is reported per step. */
export async function createSimpleAgent(
  form: SimpleAgentForm,
  ports: CreationPorts,
  progress: (step: string) => void = () => {},
): Promise<CreatedAgent> {
  const built = buildSimpleAgent(form);
  const name = form.name.trim();
  const created: { kind: string; uri: string }[] = [];
  const make = async (kind: string, title: string, body: unknown, label: string) => {
    progress(t('agentBuilder.creating', { title }));
    const uri = await ports.create(kind, body);
    await ports.describe(uri, label, kind === 'agent' ? form.description.trim() : `${title} of the agent ${name}`);
    created.push({ kind: title, uri });
    return uri;
  };
  const dictionary = await make('dictionary', 'dictionary', built.dictionary, `${name} words`);
  const behaviorSet = await make('behavior', 'behavior set', built.behaviorSet, `${name} rules`);
  const outputSet = await make('output', 'output set', built.outputSet, `${name} replies`);
  const workflow = await make(
    'workflow',
    'workflow',
    built.workflow({ dictionary, behaviorSet, outputSet }),
    `${name} workflow`,
  );
  const agentUri = await make('agent', 'agent', built.agent(workflow), name);
  return { agentUri, created };
}

/** A blank agent: one empty workflow (extensions are added later in the resource editors). */
export async function createBlankAgent(name: string, description: string, ports: CreationPorts): Promise<CreatedAgent> {
  const workflow = await ports.create('workflow', { packageExtensions: [] });
  await ports.describe(workflow, `${name} workflow`, `workflow of the agent ${name}`);
  const agentUri = await ports.create('agent', { packages: [workflow] });
  await ports.describe(agentUri, name, description);
  return {
    agentUri,
    created: [
      { kind: 'workflow', uri: workflow },
      { kind: 'agent', uri: agentUri },
    ],
  };
}
import { t } from '../i18n/index.ts';
