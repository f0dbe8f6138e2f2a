export * from './rule-model.js';
export { checkRules, rulesOf, rulesText, type RuleDestination, type UrlChecker } from './rule-validation.js';
export {
  browserOf,
  chooseVariant,
  compileRules,
  firstMatch,
  platformOf,
  RuleProbe,
  traceRules,
  type CompiledRule,
  type CompiledRules,
  type CompiledSplit,
  type RuleTrace,
  type RuleVisit,
} from './rule-engine.js';
export { acceptedLanguages } from './accept-language.js';
