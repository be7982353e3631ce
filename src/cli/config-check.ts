import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Command } from 'commander';
import { checkConfig, type CheckFiles } from '../config/check.js';
import { optInJsonSchema, planJsonSchema } from '../config/schema.js';
import { settingsTable } from '../config/settings-table.js';
import { CliFailure, type CliIo } from './client.js';

// `yoke config check [PATH]`: the checkout's opt-in file and QA plans, offline,
// with yoke's own messages. Exits 1 when anything is refused: a pre-commit step.

function checkoutFiles(root: string): CheckFiles {
  return {
    read: (path) => {
      const full = join(root, path);
      return existsSync(full) && statSync(full).isFile() ? readFileSync(full, 'utf8') : null;
    },
    list: (dir) => {
      const out: string[] = [];
      const walk = (d: string) => {
        if (!existsSync(d) || !statSync(d).isDirectory()) return;
        for (const name of readdirSync(d)) {
          const full = join(d, name);
          if (statSync(full).isDirectory()) walk(full);
          else out.push(relative(root, full).split('\\').join('/'));
        }
      };
      walk(join(root, dir));
      return out;
    },
  };
}

export function registerConfigCommand(program: Command, io: CliIo): void {
  const config = program.command('config').description("the opt-in file, and the operator's settings");
  config
    .command('schema')
    .description("print the JSON schema of .github/yoke.yml (--plan: of a QA plan), for an editor's YAML support")
    .option('--plan', 'the schema of a QA plan file instead')
    .action((o: { plan?: boolean }) => io.out(JSON.stringify(o.plan ? planJsonSchema() : optInJsonSchema(), null, 2)));
  config
    .command('settings')
    .description(
      "print the operator's environment variables: each with its default and meaning (docs/hosting.md's table)",
    )
    .action(() => io.out(settingsTable().trimEnd()));
  config
    .command('check [path]')
    .description('check .github/yoke.yml and every QA plan of a checkout (default: here), offline')
    .action(async (path: string | undefined) => {
      const root = path ?? '.';
      if (!existsSync(root) || !statSync(root).isDirectory())
        throw new CliFailure(`${root} is not a folder. Name the checkout to check, e.g. \`yoke config check .\``);
      const findings = checkConfig(checkoutFiles(root));
      for (const f of findings) (f.level === 'refused' ? io.err : io.out)(`${f.level}: ${f.text}`);
      // Files, not problems: one refusal may name several fields.
      const refused = new Set(findings.filter((f) => f.level === 'refused').map((f) => f.file)).size;
      if (refused)
        throw new CliFailure(
          `yoke would refuse ${refused === 1 ? 'this file' : `these ${refused} files`}: fix what is named above and run \`yoke config check\` again.`,
        );
    });
}
