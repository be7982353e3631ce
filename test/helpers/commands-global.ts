import { commandContainmentProblem } from '../../src/cli/exec.js';

// TR30: the CLI runs a repository's commands under bubblewrap, or refuses to.
// On a machine without it the delivery tests run them uncontained, and say so
// once; CI installs bubblewrap and requires it (YOKE_REQUIRE_AGENTS).
export default function setup(): void {
  const problem = commandContainmentProblem();
  if (!problem) return;
  if (process.env.YOKE_REQUIRE_AGENTS)
    throw new Error(
      `Repository commands cannot be contained here: ${problem}. Install bubblewrap (sudo apt-get install -y bubblewrap).`,
    );
  console.warn(
    `${problem}: the tests run repository commands without a pid namespace of their own (YOKE_COMMANDS_UNCONTAINED=1), and the containment tests are skipped. Install bubblewrap to run them.`,
  );
  process.env.YOKE_COMMANDS_UNCONTAINED = '1';
}
