import { describe, expect, it } from 'vitest';
import { owedLabelOf, parseDeliverySettings } from '../../src/config/delivery.js';
import { parsePlanFile, resolvePlanRef, resolveRunPlans } from '../../src/config/qa-plan.js';
import { parseRepoConfig } from '../../src/config/repo-config.js';

const STAGES = [
  { name: 'staging', kind: 'deploy', command: './deploy.sh staging' },
  { name: 'staging-qa', kind: 'qa' },
];

describe('the delivery section of the opt-in file', () => {
  it('takes ordered stages with defaults for the plans folder and the labels', () => {
    const r = parseDeliverySettings('acme/api', { stages: STAGES, steering: '@maint' });
    expect(r).toEqual({
      state: 'valid',
      settings: {
        stages: STAGES,
        plans_dir: '.github/yoke/qa/',
        run_plans: [],
        steering: 'maint',
        owed_label: 'yoke:delivery-owed',
        delivered_label: 'yoke:delivered',
        release_branches: [],
        deployments: { required_contexts: [], unruled_environments: 'reject' },
      },
    });
  });

  it('DP02 takes a deploy stage that runs a workflow on Actions, to an environment of its own; never both a command and a workflow', () => {
    const stages = [
      { name: 'staging', kind: 'deploy', workflow: 'deploy.yml' },
      { name: 'staging-qa', kind: 'qa' },
      { name: 'prod', kind: 'deploy', workflow: 'deploy.yml', environment: 'production' },
    ];
    const r = parseDeliverySettings('acme/api', {
      stages,
      deployments: { required_contexts: ['ci'], unruled_environments: 'ignore' },
    });
    expect(r.state === 'valid' && r.settings.stages).toEqual(stages);
    expect(r.state === 'valid' && r.settings.deployments).toEqual({
      required_contexts: ['ci'],
      unruled_environments: 'ignore',
    });
    const both = parseDeliverySettings('acme/api', {
      stages: [{ name: 'staging', kind: 'deploy', command: './deploy.sh', workflow: 'deploy.yml' }],
    });
    expect(both.state === 'refused' && both.refusal.message).toBe(
      'QA configuration of acme/api is refused: delivery.stages[0].command: a deploy stage names either the command that deploys or the workflow (deploy.yml) that does, not both',
    );
    const path = parseDeliverySettings('acme/api', {
      stages: [{ name: 'staging', kind: 'deploy', workflow: '.github/workflows/deploy.yml' }],
    });
    expect(path.state === 'refused' && path.refusal.recovery).toBe(
      'Fix `delivery.stages[0].workflow` in `.github/yoke.yml` of acme/api; yoke reads it again when a deployment run is created. The engine runs on meanwhile.',
    );
  });

  it('refuses bad delivery settings with qa_configuration_refused naming the field, while the rest of the file stays valid', () => {
    const raw = {
      auto: true,
      delivery: {
        stages: [
          { name: 'staging', kind: 'deploy' },
          { name: 'staging', kind: 'qa' },
        ],
      },
    };
    const repo = parseRepoConfig(raw);
    expect(repo.state).toBe('valid'); // the engine keeps running
    const r = parseDeliverySettings('acme/api', (repo as { config: { delivery: unknown } }).config.delivery);
    expect(r.state).toBe('refused');
    if (r.state !== 'refused') return;
    expect(r.refusal).toEqual({
      code: 'qa_configuration_refused',
      status: 422,
      message:
        'QA configuration of acme/api is refused: delivery.stages[0].command: a deploy stage needs what deploys: `command:` (run where the driver is, e.g. ./deploy.sh staging) or `workflow:` (a file under .github/workflows/, e.g. deploy.yml); delivery.stages[1].name: the stage name staging is used twice',
      recovery:
        'Fix `delivery.stages[0].command` in `.github/yoke.yml` of acme/api; yoke reads it again when a deployment run is created. The engine runs on meanwhile.',
    });
    const twice = parseDeliverySettings('acme/api', { stages: [STAGES[0], { name: 'staging', kind: 'qa' }] });
    expect(twice.state === 'refused' && twice.refusal.message).toBe(
      'QA configuration of acme/api is refused: delivery.stages[1].name: the stage name staging is used twice',
    );
  });

  it('a missing section is absent, not an error; the owed label falls back to the default', () => {
    expect(parseDeliverySettings('acme/api', undefined)).toEqual({ state: 'absent' });
    expect(owedLabelOf(undefined)).toBe('yoke:delivery-owed');
    expect(owedLabelOf({ owed_label: 'owes-delivery', stages: 'broken' })).toBe('owes-delivery');
  });
});

describe('QA plan files', () => {
  const DIR = '.github/yoke/qa/';
  it('takes its exact id from its path in the plans folder; a manual case requires evidence unless it says otherwise', () => {
    const r = parsePlanFile(
      DIR,
      '.github/yoke/qa/web/checkout.yml',
      'name: checkout\ncases:\n  - {id: cart, title: Cart, run: ./qa/cart.sh}\n  - {id: look, title: Looks right, manual: true, review: independent}\n',
    );
    expect(r).toEqual({
      ok: true,
      plan: {
        id: 'web/checkout',
        path: '.github/yoke/qa/web/checkout.yml',
        name: 'checkout',
        cases: [
          { id: 'cart', title: 'Cart', run: './qa/cart.sh', evidence: 'optional', review: 'none' },
          { id: 'look', title: 'Looks right', manual: true, evidence: 'required', review: 'independent' },
        ],
      },
    });
  });

  it('refuses a malformed plan with the field to fix', () => {
    expect(
      parsePlanFile(DIR, '.github/yoke/qa/p.yml', 'name: p\ncases:\n  - {id: a, title: A, run: x, manual: true}\n'),
    ).toEqual({
      ok: false,
      path: '.github/yoke/qa/p.yml',
      field: '.github/yoke/qa/p.yml.cases[0]',
      detail:
        '.github/yoke/qa/p.yml.cases[0]: a case has either `run:` (a command) or `manual: true`, not both and not neither',
    });
    expect(parsePlanFile(DIR, '.github/yoke/qa/q.yml', 'name: [unclosed')).toMatchObject({
      ok: false,
      detail: expect.stringContaining('is not YAML'),
    });
    expect(
      parsePlanFile(
        DIR,
        '.github/yoke/qa/r.yml',
        'name: r\ncases:\n  - {id: a, title: A, run: x}\n  - {id: a, title: B, run: y}\n',
      ),
    ).toMatchObject({ ok: false, field: '.github/yoke/qa/r.yml.cases[1].id' });
  });

  it('QA19 an ambiguous plan name refuses with the matching plan ids; an exact id selects', () => {
    const plans = [
      { id: 'web/smoke', name: 'smoke' },
      { id: 'api/smoke', name: 'smoke' },
      { id: 'checkout', name: 'checkout' },
    ];
    expect(resolvePlanRef('smoke', plans)).toEqual({ ok: false, reason: 'ambiguous', ids: ['api/smoke', 'web/smoke'] });
    expect(resolvePlanRef('web/smoke', plans)).toEqual({ ok: true, id: 'web/smoke' });
    expect(resolvePlanRef('checkout', plans)).toEqual({ ok: true, id: 'checkout' });
    expect(resolvePlanRef('nope', plans)).toEqual({
      ok: false,
      reason: 'unknown',
      known: ['api/smoke', 'checkout', 'web/smoke'],
    });
  });
});

describe('run-level plans, resolved as a stage entry and yoke config check both resolve them', () => {
  const plans = [
    { id: 'smoke', name: 'smoke' },
    { id: 'web/login', name: 'login' },
    { id: 'api/login', name: 'login' },
  ];

  it('QA19 takes exact ids and unique names, refuses a shared name with its ids, and a typo with did-you-mean', () => {
    expect(resolveRunPlans(['smoke', 'web/login'], plans, { plansDir: '.github/yoke/qa/', at: '' })).toEqual({
      ok: true,
      ids: ['smoke', 'web/login'],
    });
    expect(resolveRunPlans(['login'], plans, { plansDir: '.github/yoke/qa/', at: '' })).toEqual({
      ok: false,
      ref: 'login',
      detail: 'the run-level plan "login" matches api/login, web/login',
    });
    expect(resolveRunPlans(['smoke', 'smok'], plans, { plansDir: '.github/yoke/qa/', at: ' at 0123456789ab' })).toEqual(
      {
        ok: false,
        ref: 'smok',
        detail: 'the run-level plan "smok" is not in .github/yoke/qa/ at 0123456789ab; did you mean "smoke"?',
      },
    );
    expect(resolveRunPlans(['nightly'], plans, { plansDir: '.github/yoke/qa/', at: '' }).ok).toBe(false);
  });

  it('leaves a plan file that is there but refused to its own refusal', () => {
    expect(resolveRunPlans(['broken'], plans, { plansDir: '.github/yoke/qa/', at: '', unparsed: ['broken'] })).toEqual({
      ok: true,
      ids: ['broken'],
    });
  });
});
