import { route } from './route-def.js';

// The routes that answer with a page, a script or a redirect: the dashboard
// and its sign-in. Served by the web handlers in api.ts.

export const WEB_ROUTES = {
  dashboard: route({
    method: 'GET',
    path: '/yoke',
    role: 'operator',
    repo: 'none',
    what: 'Reading the dashboard',
    answer: null,
  }),
  dashboardAlias: route({
    method: 'GET',
    path: '/yoke/dashboard',
    role: 'operator',
    repo: 'none',
    what: 'Reading the dashboard',
    answer: null,
  }),
  repoDashboard: route({
    method: 'GET',
    path: '/yoke/repos/:owner/:name',
    role: 'operator',
    repo: 'none',
    what: "Reading a repository's dashboard",
    answer: null,
  }),
  repoPlanPage: route({
    method: 'GET',
    path: '/yoke/repos/:owner/:name/plan',
    role: 'operator',
    repo: 'none',
    what: 'Reading what the next pass would do',
    answer: null,
  }),
  repoDoctorPage: route({
    method: 'GET',
    path: '/yoke/repos/:owner/:name/doctor',
    role: 'operator',
    repo: 'none',
    what: "Checking a repository's set-up",
    answer: null,
  }),
  dashboardScript: route({
    method: 'GET',
    path: '/yoke/dashboard.js',
    role: 'public',
    repo: 'none',
    what: "Loading the dashboard's script",
    answer: null,
  }),
  signIn: route({
    method: 'POST',
    path: '/yoke/session',
    role: 'public',
    repo: 'none',
    what: 'Signing in',
    answer: null,
  }),
  signOut: route({
    method: 'POST',
    path: '/yoke/session/end',
    role: 'public',
    repo: 'none',
    what: 'Signing out',
    answer: null,
  }),
};
