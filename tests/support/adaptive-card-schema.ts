// The part of the Adaptive Cards 1.4 JSON schema (adaptive-card.json, version 1.4) covering the
// elements the team-chat channel sends: AdaptiveCard, TextBlock, Container, FactSet/Fact and
// Action.OpenUrl, with their 1.4 property names and enumerations. Transcribed (the schema is
// not shipped in any package available here); unknown properties are refused, so a misspelt
// property or a value outside 1.4's enumerations fails the test.
const textBlock = {
  type: 'object',
  required: ['type', 'text'],
  additionalProperties: false,
  properties: {
    type: { const: 'TextBlock' },
    text: { type: 'string' },
    color: { enum: ['Default', 'Dark', 'Light', 'Accent', 'Good', 'Warning', 'Attention'] },
    fontType: { enum: ['Default', 'Monospace'] },
    horizontalAlignment: { enum: ['Left', 'Center', 'Right'] },
    isSubtle: { type: 'boolean' },
    maxLines: { type: 'number' },
    size: { enum: ['Default', 'Small', 'Medium', 'Large', 'ExtraLarge'] },
    weight: { enum: ['Default', 'Lighter', 'Bolder'] },
    wrap: { type: 'boolean' },
    style: { enum: ['default', 'heading'] },
    id: { type: 'string' },
    isVisible: { type: 'boolean' },
    separator: { type: 'boolean' },
    spacing: { enum: ['Default', 'None', 'Small', 'Medium', 'Large', 'ExtraLarge', 'Padding'] },
  },
};
const openUrl = {
  type: 'object',
  required: ['type', 'url'],
  additionalProperties: false,
  properties: { type: { const: 'Action.OpenUrl' }, url: { type: 'string', pattern: '^https?://' }, title: { type: 'string' }, iconUrl: { type: 'string' }, id: { type: 'string' }, style: { enum: ['default', 'positive', 'destructive'] }, tooltip: { type: 'string' }, isEnabled: { type: 'boolean' } },
};
const factSet = {
  type: 'object',
  required: ['type', 'facts'],
  additionalProperties: false,
  properties: {
    type: { const: 'FactSet' },
    facts: { type: 'array', items: { type: 'object', required: ['title', 'value'], additionalProperties: false, properties: { title: { type: 'string' }, value: { type: 'string' } } } },
    id: { type: 'string' },
    separator: { type: 'boolean' },
    spacing: { enum: ['Default', 'None', 'Small', 'Medium', 'Large', 'ExtraLarge', 'Padding'] },
  },
};
const container = {
  type: 'object',
  required: ['type', 'items'],
  additionalProperties: false,
  properties: {
    type: { const: 'Container' },
    items: { type: 'array', items: { anyOf: [textBlock, factSet] } },
    selectAction: openUrl,
    style: { enum: ['default', 'emphasis', 'good', 'attention', 'warning', 'accent'] },
    verticalContentAlignment: { enum: ['Top', 'Center', 'Bottom'] },
    bleed: { type: 'boolean' },
    id: { type: 'string' },
    separator: { type: 'boolean' },
    spacing: { enum: ['Default', 'None', 'Small', 'Medium', 'Large', 'ExtraLarge', 'Padding'] },
  },
};
export const ADAPTIVE_CARD_14_SUBSET = {
  type: 'object',
  required: ['type', 'version'],
  additionalProperties: false,
  properties: {
    $schema: { type: 'string' },
    type: { const: 'AdaptiveCard' },
    version: { const: '1.4' },
    body: { type: 'array', items: { anyOf: [textBlock, factSet, container] } },
    actions: { type: 'array', items: openUrl },
    fallbackText: { type: 'string' },
    lang: { type: 'string' },
    speak: { type: 'string' },
    minHeight: { type: 'string' },
    verticalContentAlignment: { enum: ['Top', 'Center', 'Bottom'] },
  },
};
