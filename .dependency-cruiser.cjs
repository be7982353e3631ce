// The floors of src/ (docs/architecture.md), held by dependency-cruiser: a
// module imports only from its own floor or the floors below it. `npm test`
// runs it (npm run lint:layers); an import that climbs a floor fails it.
// The sandbox (sandbox/, not shipped) sits above every floor: it may import
// any of src/, and nothing in src/ imports it.

/** Floors, lowest first: a path pattern each (anchored at the repository's root). */
const FLOORS = [
  { name: 'kernel', path: '^src/kernel/' },
  { name: 'infrastructure', path: '^src/(config|store|forge|launcher|agent)/' },
  { name: 'domain', path: '^src/(fleet|delivery)/|^src/(leadership|process-lease|ticks)\\.ts$' },
  { name: 'edges', path: '^src/(commands|webhooks|http)/' },
  { name: 'roots', path: '^src/cli/|^src/(app|server|door|main|tracing)\\.ts$' },
];

const climbs = FLOORS.slice(0, -1).map((floor, i) => ({
  name: `${floor.name}-climbs`,
  comment: `The ${floor.name} floor imports only from itself or below: ${FLOORS.slice(0, i + 1).map((f) => f.name).join(', ')}.`,
  severity: 'error',
  from: { path: floor.path },
  to: { path: FLOORS.slice(i + 1).map((f) => f.path).join('|') },
}));

/**
 * The fleet's rooms (src/fleet/<room>/), each with what it may not import. Types cross rooms freely (a
 * decision names the shapes it reads); code does not. The shared kinds and the context sit at src/fleet's root,
 * below every room.
 */
const FLEET_ROOMS = {
  spawn: {
    forbids: ['landing', 'runs', 'money', 'notices', 'engine'],
    why: 'the spawn pass reads and decides: it writes nothing, so it imports no other room\'s code',
  },
  money: {
    forbids: ['spawn', 'landing', 'runs', 'notices', 'engine'],
    why: 'money is priced and held by pure rules and the store: it imports no other room\'s code',
  },
  notices: { forbids: ['landing', 'runs', 'engine'], why: 'what people read imports nobody\'s writes: no landing, no runs, no engine' },
  landing: { forbids: ['runs', 'money', 'engine'], why: 'landing may read the pass\'s facts, but launches nothing and is not the engine' },
  runs: { forbids: ['engine'], why: 'runs start, end and report; the engine drives them, not the other way round' },
};
const rooms = Object.entries(FLEET_ROOMS).map(([room, { forbids, why }]) => ({
  name: `fleet-${room}-room`,
  comment: `src/fleet/${room}/: ${why} (src/fleet/{${forbids.join(',')}}/, types aside).`,
  severity: 'error',
  from: { path: `^src/fleet/${room}/` },
  to: { path: `^src/fleet/(${forbids.join('|')})/`, dependencyTypesNot: ['type-only'] },
}));

module.exports = {
  forbidden: [
    ...climbs,
    ...rooms,
    {
      name: 'fleet-root-below-rooms',
      comment: "src/fleet's root holds the context and the shared kinds, below every room: it imports none of them (types aside).",
      severity: 'error',
      from: { path: '^src/fleet/[^/]+\\.ts$' },
      to: { path: '^src/fleet/[^/]+/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'store-halves-apart',
      comment: "The store's fleet half and delivery half do not import each other; both stand on store/sql/ and the store's root.",
      severity: 'error',
      from: { path: '^src/store/(fleet|delivery)/' },
      to: { path: '^src/store/(fleet|delivery)/', pathNot: '^src/store/$1/' },
    },
    {
      name: 'store-sql-beneath',
      comment: 'The SQL engine (store/sql/) is beneath the tables: it imports no table of either half.',
      severity: 'error',
      from: { path: '^src/store/sql/' },
      to: { path: '^src/store/(fleet|delivery)/' },
    },
    {
      name: 'unfloored',
      comment: 'Every file of src/ sits on a floor: add a new folder or top-level file to FLOORS in .dependency-cruiser.cjs.',
      severity: 'error',
      from: { path: '^src/', pathNot: FLOORS.map((f) => f.path).join('|') },
      to: {},
    },
    {
      name: 'fleet-imports-delivery',
      comment: 'The fleet never imports the delivery half (delivery/): delivery listens to the fleet, not the other way round.',
      severity: 'error',
      from: { path: '^src/fleet/' },
      to: { path: '^src/delivery/' },
    },
    {
      name: 'no-circular',
      comment: 'No import cycles, type-only imports included.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'drivers-outside-store',
      comment: 'Only src/store talks to a database driver.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/store/' },
      to: { path: 'node_modules/(better-sqlite3|pg)/' },
    },
    {
      name: 'octokit-outside-forge',
      comment: 'Only src/forge (and the composition roots that hand Probot its class) imports Octokit or Probot.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/forge/|^src/(app|server|door)\\.ts$|^src/webhooks/handlers\\.ts$' },
      to: { path: 'node_modules/(@octokit|probot)/' },
    },
    {
      name: 'production-imports-sandbox',
      comment: 'The sandbox (sandbox/) is not shipped: nothing in src/ imports it.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^sandbox/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.js', '.json'] },
    exclude: { path: '^src/.*\\.d\\.ts$' },
  },
};

// The rooms, for `npm run architecture` to draw: not a setting of dependency-cruiser's, so not one its
// configuration lists (its CLI refuses a property it does not know).
Object.defineProperty(module.exports, 'rooms', { value: FLEET_ROOMS, enumerable: false });
