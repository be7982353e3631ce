import { describe, expect, it } from 'vitest';
import { parseOperatorEnv } from '../../src/config/env.js';
import { parseRepoConfig } from '../../src/config/repo-config.js';

describe('operator settings', () => {
  it('TR17 YOKE_PUBLIC_URL is https, or plain http only on loopback: run secrets and tokens travel over it', () => {
    const msg =
      'YOKE_PUBLIC_URL: must be https (run secrets, OIDC tokens and push tokens travel over it); plain http is allowed only for loopback (localhost, 127.0.0.1, [::1]). Put yoke behind a TLS endpoint and set YOKE_PUBLIC_URL=https://…';
    for (const bad of ['http://yoke.example.com', 'http://10.0.0.5:3000', 'ftp://yoke.example.com'])
      expect(parseOperatorEnv({ YOKE_PUBLIC_URL: bad })).toEqual({ ok: false, problems: [msg] });
    for (const good of [
      'https://yoke.example.com',
      'http://127.0.0.1:3000',
      'http://localhost:3000',
      'http://[::1]:3000',
    ])
      expect(parseOperatorEnv({ YOKE_PUBLIC_URL: good }).ok).toBe(true);
  });

  it('has embedded defaults that need no GitHub account: SQLite file, cap 2, 60 s and 30 s ticks', () => {
    const res = parseOperatorEnv({});
    expect(res.ok).toBe(true);
    if (!res.ok) return;
    expect(res.settings).toMatchObject({
      dbPath: '.yoke/yoke.db',
      globalCap: 2,
      tickMs: 60_000,
      reaperMs: 30_000,
      pauseThreshold: 3,
      launcher: 'actions',
      publicUrl: 'http://localhost:3000',
    });
  });

  it('GH05 keeps request throttling on unless the operator turns it off', () => {
    const on = parseOperatorEnv({});
    expect(on.ok && on.settings.throttle).toBe(true);
    const off = parseOperatorEnv({ YOKE_THROTTLE: 'off' });
    expect(off.ok && off.settings.throttle).toBe(false);
    const bad = parseOperatorEnv({ YOKE_THROTTLE: 'sometimes' });
    expect(bad.ok ? [] : bad.problems).toEqual(['YOKE_THROTTLE: must be "on" or "off"']);
  });

  it('SP05 reads per-repo cap overrides, case-insensitively', () => {
    const res = parseOperatorEnv({ YOKE_GLOBAL_CAP: '3', YOKE_REPO_CAPS: 'Acme/API=5, acme/web=1' });
    expect(res.ok && res.settings.repoCaps).toEqual({ 'acme/api': 5, 'acme/web': 1 });
  });

  it('names every bad value with its fix', () => {
    const res = parseOperatorEnv({
      YOKE_GLOBAL_CAP: 'two',
      YOKE_REPO_CAPS: 'acme=3',
      YOKE_LAUNCHER: 'docker',
      YOKE_PUBLIC_URL: 'not a url',
    });
    expect(res.ok).toBe(false);
    if (res.ok) return;
    expect(res.problems).toEqual([
      'YOKE_GLOBAL_CAP: must be a whole number',
      'YOKE_REPO_CAPS: "acme=3" is not owner/repo=N with N at least 1 (example: YOKE_REPO_CAPS=acme/api=3,acme/web=1)',
      'YOKE_LAUNCHER: must be "actions" or "command"',
      'YOKE_PUBLIC_URL: must be a URL such as https://yoke.example.com',
    ]);
    // TR06: a loopback port the forwarder inside a command's sandbox could not listen on is refused, not dropped.
    for (const [value, problem] of [
      [
        '127.0.0.1:80',
        `"127.0.0.1:80": a command's sandbox runs unprivileged and cannot listen below port 1024 to forward it; serve that service on port 1024 or above (127.0.0.1:8080)`,
      ],
      [
        '127.0.0.1:0',
        `"127.0.0.1:0" is not a host name (registry.npmjs.org), a subdomain glob (*.example.com), a loopback port (127.0.0.1:3000) or "host"`,
      ],
    ]) {
      const refused = parseOperatorEnv({ YOKE_COMMAND_NETWORK_ALLOW: value });
      expect(refused.ok ? [] : refused.problems).toEqual([`YOKE_COMMAND_NETWORK_ALLOW: ${problem}`]);
    }
    // …and so is a yoke on the proxy's own port, which a command run could not reach through its sandbox.
    const onProxyPort = parseOperatorEnv({ YOKE_LAUNCHER: 'command', YOKE_COMMAND: 'node agent.js', PORT: '8877' });
    expect(onProxyPort.ok ? [] : onProxyPort.problems).toEqual([
      "YOKE_PUBLIC_URL: http://localhost:8877 is on port 8877, where yoke's proxy listens inside a command's sandbox, so a run could not reach yoke: serve yoke on another port (PORT, or YOKE_PUBLIC_URL)",
    ]);
    expect(
      parseOperatorEnv({
        YOKE_LAUNCHER: 'command',
        YOKE_COMMAND: 'node agent.js',
        PORT: '8877',
        YOKE_COMMAND_NETWORK_ALLOW: 'host',
      }).ok,
    ).toBe(true);
    const allowed = parseOperatorEnv({ YOKE_COMMAND_NETWORK_ALLOW: '127.0.0.1:1024' });
    expect(allowed.ok && allowed.settings.commandNetwork).toEqual({ kind: 'own', hosts: [], loopback: [1024] });
    const cmd = parseOperatorEnv({ YOKE_LAUNCHER: 'command' });
    expect(cmd.ok ? [] : cmd.problems).toEqual([
      'YOKE_COMMAND: the command launcher needs the command to start, e.g. YOKE_COMMAND="node agent.js"',
    ]);
  });
});

describe('the opt-in file', () => {
  it('GH01 an empty file opts in with the defaults: autoland and fix-forward off', () => {
    const res = parseRepoConfig({});
    expect(res).toEqual({
      state: 'valid',
      config: {
        afk_label: 'yoke:afk',
        auto: true,
        budget_minutes: { afk: 60, lander: 20, fix: 45 },
        autoland: { enabled: false, merge_method: 'squash', stack_depth: 4, fast_forward: false },
        fix_forward: { enabled: false, max_attempts: 2 },
        fix: { on_review: true },
        launcher: { workflow: 'yoke-run.yml' },
        agent: { max_turns: 60, network: { allow: [] } },
        protected_paths: [],
        dashboard_issue: true,
      },
    });
    expect(parseRepoConfig(null)).toEqual({ state: 'absent' });
  });

  it('GH01 a misspelt setting is answered with the one it is closest to, at any depth', () => {
    const res = parseRepoConfig({
      autolnad: { enabled: true },
      fix_forward: { enabeld: true },
      budget_minutes: { lnader: 5 },
    });
    expect(res).toEqual({
      state: 'invalid',
      reason:
        '.github/yoke.yml is not valid: budget_minutes: "lnader" is not a setting here; did you mean "lander"?; fix_forward: "enabeld" is not a setting here; did you mean "enabled"?; .github/yoke.yml: "autolnad" is not a setting here; did you mean "autoland"?',
    });
  });

  it('GH01 an invalid file gives a reason a maintainer can act on, naming each field', () => {
    const res = parseRepoConfig({
      autoland: { enabled: 'yes' },
      prefix: 'app-1',
      budget_minutes: { afk: 0 },
      colour: 'blue',
      _extends: 'acme/.github',
    });
    expect(res.state).toBe('invalid');
    if (res.state !== 'invalid') return;
    expect(res.reason).toContain('.github/yoke.yml is not valid:');
    expect(res.reason).toContain('autoland.enabled: Invalid input: expected boolean, received string');
    expect(res.reason).toContain(
      'prefix: prefix must be 1-10 capital letters or digits, starting with a letter (e.g. APP)',
    );
    expect(res.reason).toContain('budget_minutes.afk: Too small');
    expect(res.reason).toContain(
      '.github/yoke.yml: "colour" is not a setting here (the settings are: afk_label, auto, prefix, budget_minutes, autoland, fix_forward, fix, launcher, budget, agent, validate, protected_paths, dashboard_issue, delivery)',
    );
    expect(res.reason).not.toContain('_extends');
    expect(parseRepoConfig(['a'])).toEqual({
      state: 'invalid',
      reason: '.github/yoke.yml must be a YAML mapping of settings (`key: value` lines), not a list',
    });
  });
});

describe('the documented opt-in file', () => {
  it('GH01 fixtures/yoke.yml, the README example, validates as written', async () => {
    const { readFileSync } = await import('node:fs');
    const { parse } = await import('yaml');
    const res = parseRepoConfig(parse(readFileSync(new URL('../../fixtures/yoke.yml', import.meta.url), 'utf8')));
    expect(res.state).toBe('valid');
    if (res.state === 'valid')
      expect(res.config.autoland).toEqual({
        enabled: true,
        merge_method: 'squash',
        stack_depth: 4,
        fast_forward: false,
      });
  });
});
