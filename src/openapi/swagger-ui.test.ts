import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { holdsEveryFile, swaggerUiDirectory } from './swagger-ui.js';

describe("Swagger UI's files", () => {
  const made: string[] = [];
  afterEach(() => {
    for (const directory of made.splice(0)) rmSync(directory, { recursive: true, force: true });
  });

  it('are found where the app reads them, every one the page loads', async () => {
    const directory = await swaggerUiDirectory();
    await expect(holdsEveryFile(directory)).resolves.toBe(directory);
  });

  it('stop the start when one is missing: the folder alone is not enough', async () => {
    const source = await swaggerUiDirectory();
    const copy = mkdtempSync(join(tmpdir(), 'proceed-swagger-ui-'));
    made.push(copy);
    for (const name of ['swagger-ui.css', 'index.css', 'swagger-ui-bundle.js'])
      copyFileSync(join(source, name), join(copy, name));
    expect(readdirSync(copy)).not.toContain('swagger-ui-standalone-preset.js');
    await expect(holdsEveryFile(copy)).rejects.toThrow(/swagger-ui-standalone-preset\.js/);
    copyFileSync(
      join(source, 'swagger-ui-standalone-preset.js'),
      join(copy, 'swagger-ui-standalone-preset.js'),
    );
    await expect(holdsEveryFile(copy)).resolves.toBe(copy);
  });
});
