// `npm run bench -- --smoke`: every section at a small size, in seconds, so that CI runs the whole bench and a
// broken one fails it. The figures then say nothing of speed; their names are the full bench's, marked smoke.

export const SMOKE = process.argv.includes('--smoke');

/** The full bench's size, or the smoke run's. */
export const sized = (full: number, smoke: number): number => (SMOKE ? smoke : full);
