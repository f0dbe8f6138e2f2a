import { expect } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

/** The ConfigError's message for `env`, or '' when the environment was accepted. */
export function configProblems(env: Record<string, string>): string {
  try {
    loadConfig(env);
    return '';
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
}
