/**
 * `proceed openapi --lint`: Spectral's OWASP API Security rules, with the override Proceed ships
 * (openapi-owasp.spectral.yaml at the package root, docs/openapi.md "OWASP rules"), run on an
 * app's document. Spectral is an optional peer dependency: loaded here only, when asked for.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import type { OpenApiDocument } from '../openapi/index.js';
import { CliError } from './errors.js';

/** The override, beside `dist/` in the package and beside `src/` in this repository. */
export const owaspRulesetFile = fileURLToPath(new URL('../../openapi-owasp.spectral.yaml', import.meta.url));

const owaspRuleset = '@stoplight/spectral-owasp-ruleset';
const spectralPackages = ['@stoplight/spectral-core', '@stoplight/spectral-parsers', owaspRuleset];
const severities = ['error', 'warn', 'info', 'hint'] as const;
const ruleSettings = new Set(['off', ...severities]);

/** One finding, as printed: `error owasp:api4:2023-string-limit paths./api/x.get… message`. */
export interface LintFinding {
  severity: (typeof severities)[number];
  rule: string;
  path: string;
  message: string;
}

/** The override's rule settings; it must extend the OWASP ruleset and nothing else. */
function overrideRules(): Record<string, string> {
  const file = parse(readFileSync(owaspRulesetFile, 'utf8')) as { extends?: unknown; rules?: unknown };
  const extended = Array.isArray(file.extends) ? file.extends : [file.extends];
  if (extended.length !== 1 || extended[0] !== owaspRuleset)
    throw new CliError(`${owaspRulesetFile} must extend "${owaspRuleset}" only`);
  const rules = (file.rules ?? {}) as Record<string, unknown>;
  for (const [name, setting] of Object.entries(rules)) {
    if (typeof setting !== 'string' || !ruleSettings.has(setting))
      throw new CliError(`${owaspRulesetFile}: rule ${name} must be one of ${[...ruleSettings].join(', ')}`);
  }
  return rules as Record<string, string>;
}

function isMissingModule(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
}

async function loadSpectral() {
  try {
    const [core, parsers, owasp] = await Promise.all([
      import('@stoplight/spectral-core'),
      import('@stoplight/spectral-parsers'),
      import('@stoplight/spectral-owasp-ruleset'),
    ]);
    // Node hands a CommonJS module over as `default`; tsx (a TypeScript entry) as named exports.
    return {
      core: (core.default ?? core) as typeof core.default,
      parsers: (parsers.default ?? parsers) as typeof parsers.default,
      owasp: owasp.default,
    };
  } catch (error) {
    if (!isMissingModule(error)) throw error;
    throw new CliError(
      `--lint runs Spectral's OWASP rules, which are not installed: npm install --save-dev ${spectralPackages.join(' ')}`,
    );
  }
}

/**
 * The findings of the OWASP rules, with the override, on a document: errors first, then
 * warnings, each in document order.
 *
 * @example
 * const findings = await lintOpenApi(document);
 * findings.filter((finding) => finding.severity === 'error'); // []
 */
export async function lintOpenApi(
  document: OpenApiDocument,
  source = 'openapi.json',
): Promise<LintFinding[]> {
  const { core, parsers, owasp } = await loadSpectral();
  const linter = new core.Spectral();
  linter.setRuleset({ extends: [[owasp as never, 'recommended']], rules: overrideRules() as never });
  const results = await linter.run(new core.Document(JSON.stringify(document), parsers.Json, source));
  return results
    .map((result) => ({
      severity: severities[result.severity] ?? 'hint',
      rule: String(result.code),
      path: result.path.join('.'),
      message: result.message,
    }))
    .sort((a, b) => severities.indexOf(a.severity) - severities.indexOf(b.severity));
}

/**
 * Prints the findings and a count; throws a CliError (exit code 1) when one is an error.
 *
 * @example
 * reportLint(await lintOpenApi(document));
 */
export function reportLint(findings: readonly LintFinding[]): void {
  const lines = findings.map((each) => `${each.severity} ${each.rule} ${each.path}: ${each.message}`);
  const count = (severity: LintFinding['severity']) =>
    findings.filter((finding) => finding.severity === severity).length;
  const [errors, warnings] = [count('error'), count('warn')];
  const summary = `OWASP rules (with ${owaspRulesetFile}): ${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}`;
  process.stdout.write(`${[...lines, summary].join('\n')}\n`);
  if (errors > 0)
    throw new CliError(
      `the OpenAPI document has ${errors} error${errors === 1 ? '' : 's'} under the OWASP rules`,
    );
}
