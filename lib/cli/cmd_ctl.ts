/**
 * `intendant ctl`: control a session from outside its runner. `answer` replies to a
 * pending askHuman, `steer` queues text for the next turn boundary, `rollback` cuts the
 * conversation after a seq (queued if the session runs, applied at once if not).
 */
import { resolveConfig } from "../config.ts";
import { InvalidInputError } from "../errors.ts";
import { findSession } from "../session_log/mod.ts";
import { answerQuestion, requestRollback, requestSteer } from "../runner/mod.ts";
import { numberFlag, parseArgs } from "./parse_args.ts";
import type { CliIo, Command } from "./io.ts";
import { EXIT_OK } from "./exit_codes.ts";

const USAGE = `intendant ctl answer SESSION TEXT      answer a pending askHuman
       intendant ctl steer SESSION TEXT       deliver TEXT at the next turn boundary
       intendant ctl rollback SESSION --to-seq N   cut the conversation after seq N`;

export const ctlCommand: Command = {
  name: "ctl",
  summary: "control a session: answer a question, steer, roll back",
  usage: USAGE,
  async run(argv: string[], io: CliIo): Promise<number> {
    const args = parseArgs(argv, { "to-seq": { type: "number" } });
    const [verb, sessionArg, ...rest] = args.positionals;
    if (!verb || !["answer", "steer", "rollback"].includes(verb)) {
      throw new InvalidInputError(
        `Unknown ctl action "${verb ?? ""}": expected answer, steer or rollback`,
      );
    }
    if (!sessionArg) throw new InvalidInputError(`Missing SESSION (an id or unique prefix)`);
    const cfg = resolveConfig(io.env, { cwd: io.cwd });
    const found = await findSession(cfg.logsDir, sessionArg);
    const text = rest.join(" ");
    if (verb === "answer") {
      if (!text) throw new InvalidInputError("Missing TEXT to answer with");
      const r = await answerQuestion(found.dir, text);
      io.stdout(`answered question ${r.questionId}\n`);
    } else if (verb === "steer") {
      if (!text) throw new InvalidInputError("Missing TEXT to steer with");
      const r = await requestSteer(found.dir, text);
      io.stdout(`steer ${r.steerId} queued for the next turn\n`);
    } else {
      const toSeq = numberFlag(args, "to-seq");
      if (toSeq === undefined) throw new InvalidInputError("Missing --to-seq N");
      const r = await requestRollback(found.dir, toSeq);
      io.stdout(
        r.applied
          ? `rolled back to seq ${toSeq}\n`
          : `rollback to seq ${toSeq} queued for the next turn\n`,
      );
    }
    return EXIT_OK;
  },
};
