/**
 * Session logging: the self-contained per-session log directory (event spine, turn
 * files, runtime logs, meta, transcript, summaries, frames), naming, discovery, the
 * daemon.log tee and the crash hook. The only public door of lib/session_log/.
 */
export * from "./events.ts";
export * from "./paths.ts";
export { parseMeta, readMeta, SessionMetaSchema, writeMeta } from "./meta.ts";
export type { MetaRead, SessionMeta } from "./meta.ts";
export { appendEventToDir, buildEvent, readSessionSpan } from "./core.ts";
export type { SessionLogOptions } from "./core.ts";
export { PTY_FULL_LOG_THRESHOLD_BYTES, SessionLog } from "./session_log.ts";
export type { NewSessionMeta, RuntimeLogs } from "./session_log.ts";
export { parseEvents, readSessionEvents } from "./read_events.ts";
export type { ReadEvent, ReadEventsResult } from "./read_events.ts";
export { buildTranscript, rebuildTranscript } from "./transcript.ts";
export {
  isLegacyAt,
  LEGACY_FOLLOW_UP,
  legacyFollowUp,
  legacyTaskText,
  nativeEraOf,
} from "./native_era.ts";
export type { TranscriptEntry } from "./transcript.ts";
export * from "./names.ts";
export * from "./discovery.ts";
export { installDaemonLogTee } from "./tee.ts";
export type { Tee, TeeOptions } from "./tee.ts";
export { crashLog, installCrashHook, registerCrashLog } from "./crash_hook.ts";
export * from "./time.ts";
export { extractFunctionNames } from "./json_functions.ts";
export type { SessionStats } from "./stats.ts";
export { renameNativeSession } from "./rename.ts";
export { replaySession, scanReplayStatus, toReplayEntries } from "./replay.ts";
export type { ReplayEntry, ReplayStart } from "./replay.ts";
