// The crontab of README.md's "Running it from cron", read as cron reads it: variable lines
// (NAME=value) set the job's environment over cron's own (HOME, LOGNAME, SHELL=/bin/sh,
// PATH=/usr/bin:/bin); the job line's command follows its five time fields, and its `\%` is a
// plain `%` (crontab(5)). test/e2e/package.test.ts runs it under `env -i`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './cli.js';

export interface Crontab {
  variables: Record<string, string>;
  /** The job's command, as cron hands it to /bin/sh -c. */
  command: string;
}

export function readmeCrontab(): Crontab {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Running it from cron\n'));
  const block = /```cron\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error('README.md: no ```cron block under "Running it from cron"');
  const variables: Record<string, string> = {};
  let command: string | undefined;
  for (const line of block[1].split('\n')) {
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
    const variable = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (variable) variables[variable[1]] = variable[2];
    else command = line.replace(/^(\S+\s+){5}/, '').replace(/\\%/g, '%');
  }
  if (command === undefined) throw new Error('README.md: the cron block has no job line');
  return { variables, command };
}

/** The environment cron gives a job (Debian's cron), before the crontab's variables. */
export function cronEnvironment(home: string): Record<string, string> {
  return { HOME: home, LOGNAME: 'leads', SHELL: '/bin/sh', PATH: '/usr/bin:/bin' };
}
