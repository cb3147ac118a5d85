/**
 * As ink decides (is-in-ci): under CI=true ink draws only the last frame, so a full-screen UI
 * would stay blank there. Commands that draw one treat CI like a missing terminal.
 */
export const inCi = () => ['CI', 'CONTINUOUS_INTEGRATION'].some((k) => k in process.env && process.env[k] !== '0' && process.env[k] !== 'false');

/** Whether a command may draw an interactive UI: both ends are terminals and this is not CI. */
export const canDrawUi = () => Boolean(process.stdin.isTTY && process.stdout.isTTY) && !inCi();
