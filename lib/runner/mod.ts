/**
 * The headless runner: mock provider scripts, the agent loop, the command runtime,
 * session start/resume, and the file-based control channel used by `intendant ctl`.
 */
export {
  loadMockScript,
  MOCK_SCRIPT_EXAMPLE,
  mockScriptHelp,
  mockScriptKeys,
  MockScriptSchema,
  parseMockScript,
} from "./mock_script.ts";
export type { MockCommand, MockScript, MockTurn } from "./mock_script.ts";
export { createMockProvider } from "./provider.ts";
export type { Provider, ProviderContext, ProviderTurn } from "./provider.ts";
export { askHumanNotice, QUESTION_NOTICE_MAX_CHARS, runRound } from "./loop.ts";
export type { RoundOptions, RoundOutcome } from "./loop.ts";
export { CAPTURE_CAP_BYTES, cutUtf8, runCommand } from "./runtime.ts";
export { resumeSession, startSession } from "./session_setup.ts";
export type { Relationship, StartedSession, StartOptions } from "./session_setup.ts";
export {
  answerQuestion,
  applyRollback,
  CTL_DIR,
  requestRollback,
  requestSteer,
} from "./control.ts";
