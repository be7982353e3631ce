// The lander's report job (TR02): it runs no code of the PR it judges. It
// reads the validation job's result, asks the runner for an OIDC token, and
// reports accept or reject to yoke.

import { requireEnv as need } from './env.js';

const result = need('VALIDATION');
const runId = need('YOKE_RUN_ID');
const apiUrl = need('YOKE_API_URL');
const head = process.env.YOKE_HEAD_SHA ?? '';
const body =
  result === 'success' || result === 'failure'
    ? { outcome: 'success', verdict: result === 'success' ? 'accept' : 'reject', summary: `The validation job ${result === 'success' ? 'passed' : 'failed'} at \`${head.slice(0, 7)}\`.` }
    : { outcome: 'failure', summary: `The validation job ended ${result}.` };

const tokenRes = await fetch(`${need('ACTIONS_ID_TOKEN_REQUEST_URL')}&audience=${encodeURIComponent(apiUrl)}`, {
  headers: { authorization: `bearer ${need('ACTIONS_ID_TOKEN_REQUEST_TOKEN')}` },
});
if (!tokenRes.ok) throw new Error(`the runner gave no OIDC token: ${tokenRes.status}`);
const { value } = (await tokenRes.json()) as { value: string };
const res = await fetch(`${apiUrl}/yoke/api/runs/${runId}/result`, {
  method: 'POST',
  headers: { authorization: `Bearer ${value}`, 'content-type': 'application/json' },
  body: JSON.stringify(body),
});
if (!res.ok) throw new Error(`yoke refused the report: ${res.status} ${await res.text()}`);
console.log(`[report ${runId}] ${JSON.stringify(body)}`);
