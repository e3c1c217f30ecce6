import { Type, type Static } from '@sinclair/typebox';
import { kindNamed, type ResourceKindDefinition } from '../kinds.ts';
import { aliasRenamer, closed, discriminated, type AliasSpec } from './common.ts';

const delay = Type.Optional(
  Type.Integer({
    minimum: 0,
    description: 'Delay in milliseconds, passed to the client (the server never waits; default 0).',
  }),
);
const typeIs = <T extends string>(type: T) => Type.Literal(type, { description: `Always '${type}'.` });

export const TextItemSchema = closed(
  {
    type: typeIs('text'),
    text: Type.String({ description: 'Text; may hold template expressions such as {context.city}.' }),
    delay,
  },
  { description: 'A text output.' },
);
export const ImageItemSchema = closed(
  {
    type: typeIs('image'),
    uri: Type.String({ description: 'Image address.' }),
    alt: Type.Optional(Type.String({ description: 'Alternative text.' })),
  },
  { description: 'An image output.' },
);
export const AgentFaceItemSchema = closed(
  {
    type: typeIs('agentFace'),
    uri: Type.String({ description: 'Image address of the face.' }),
    alt: Type.Optional(Type.String({ description: 'Alternative text.' })),
    delay,
  },
  { description: "An image of the agent's face." },
);

export const QuickReplySchema = closed(
  {
    value: Type.String({ description: 'Text shown to (and sent back by) the user.' }),
    expressions: Type.Optional(
      Type.String({
        description:
          'Expressions the reply stands for when typed back, e.g. quickReply(option1); default: the value in lower case.',
      }),
    ),
    isDefault: Type.Optional(Type.Boolean({ description: 'Marks the default reply.' })),
  },
  { description: 'A quick reply offered to the user.' },
);
export const QuickReplyItemSchema = closed(
  {
    type: typeIs('quickReply'),
    value: Type.String({ description: 'Text shown to (and sent back by) the user.' }),
    expressions: Type.Optional(Type.String({ description: 'Expressions the reply stands for.' })),
    isDefault: Type.Optional(Type.Boolean({ description: 'Marks the default reply.' })),
  },
  { description: 'A quick reply chosen as an alternative: it becomes a quick reply instead of an output item.' },
);
export const InputFieldItemSchema = closed(
  {
    type: typeIs('inputField'),
    subType: Type.Optional(Type.String({ description: "Kind of field, e.g. 'text' or 'email'." })),
    placeholder: Type.Optional(Type.String()),
    label: Type.Optional(Type.String()),
    defaultValue: Type.Optional(Type.String()),
    validation: Type.Optional(
      closed(
        {
          minLength: Type.Optional(Type.Integer({ minimum: 0 })),
          maxLength: Type.Optional(Type.Integer({ minimum: 0 })),
          validationErrorMessage: Type.Optional(Type.String()),
        },
        { description: 'Client-side validation of the field.' },
      ),
    ),
  },
  { description: 'An input field for the client to show.' },
);
export const ApplicationLinkItemSchema = closed(
  { type: typeIs('applicationLink'), path: Type.Optional(Type.String()), label: Type.Optional(Type.String()), delay },
  { description: 'A link into the client application.' },
);
export const ButtonItemSchema = closed(
  {
    type: typeIs('button'),
    buttonType: Type.Optional(Type.String()),
    label: Type.Optional(Type.String()),
    onPress: Type.Optional(Type.String()),
  },
  { description: 'A button.' },
);
export const OtherItemSchema = Type.Unsafe<{ type: 'other' } & Record<string, string | number | boolean>>({
  type: 'object',
  description: "A free output item: any fields with text, number or boolean values besides 'type'.",
  required: ['type'],
  properties: { type: { const: 'other' } },
  additionalProperties: { type: ['string', 'number', 'boolean'] },
});

type OutputItem =
  | Static<typeof TextItemSchema>
  | Static<typeof ImageItemSchema>
  | Static<typeof AgentFaceItemSchema>
  | Static<typeof QuickReplyItemSchema>
  | Static<typeof InputFieldItemSchema>
  | Static<typeof ApplicationLinkItemSchema>
  | Static<typeof ButtonItemSchema>
  | Static<typeof OtherItemSchema>;

export const OutputItemSchema = discriminated<OutputItem>(
  'type',
  {
    text: TextItemSchema,
    image: ImageItemSchema,
    agentFace: AgentFaceItemSchema,
    quickReply: QuickReplyItemSchema,
    inputField: InputFieldItemSchema,
    applicationLink: ApplicationLinkItemSchema,
    button: ButtonItemSchema,
    other: OtherItemSchema,
  },
  'A typed output item, chosen by its type: text, image, agentFace, quickReply, inputField, applicationLink, button or other.',
);

/** An alternative: a typed item, or a plain string (a text item). Object first, so errors name the item's fields. */
export const ValueAlternativeSchema = Type.Unsafe<OutputItem | string>({
  description: 'One alternative: a typed output item, or a plain string standing for a text item.',
  anyOf: [OutputItemSchema, Type.String()],
});

export const OutputSchema = closed(
  {
    valueAlternatives: Type.Array(ValueAlternativeSchema, {
      description: 'One alternative is chosen at random per turn.',
    }),
  },
  { description: 'One output position.' },
);

export const OutputEntrySchema = closed(
  {
    action: Type.String({ minLength: 1, description: 'The action that selects this entry.' }),
    timesOccurred: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: 'Occurrence this entry applies to: 0 the first, 1 the second, ... (default 0).',
      }),
    ),
    outputs: Type.Optional(Type.Array(OutputSchema, { description: 'Outputs, in order.' })),
    quickReplies: Type.Optional(
      Type.Array(QuickReplySchema, { description: 'Quick replies offered with this entry.' }),
    ),
  },
  { description: 'The outputs for one action and occurrence.' },
);

export const OutputSetSchema = closed(
  {
    language: Type.Optional(
      Type.String({
        description:
          "Language code; when set, the set produces output only when it equals the conversation's 'lang' property.",
      }),
    ),
    outputSet: Type.Optional(Type.Array(OutputEntrySchema, { description: 'One entry per action and occurrence.' })),
  },
  { title: 'OutputSet', description: 'An output set: what the agent says for each action.' },
);
export type OutputSet = Static<typeof OutputSetSchema>;

const aliases: AliasSpec = { aliases: { lang: 'language' } };

export const outputKind: ResourceKindDefinition = {
  ...kindNamed('output'),
  schema: OutputSetSchema,
  renameAliases: aliasRenamer(aliases, OutputSetSchema),
  checkSemantics: () => [],
  // One entry per action and occurrence (an absent timesOccurred is 0).
  patchLists: { outputSet: (entry) => JSON.stringify([entry.action, entry.timesOccurred ?? 0]) },
};
