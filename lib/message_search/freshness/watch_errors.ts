/**
 * What a failed watch means for the user, in one line: the limit it hit and how to raise
 * it, or the error as the OS gave it. Pure. Linux's inotify has two per-user limits: the
 * watches (`fs.inotify.max_user_watches`, one per watched directory; a recursive watch of
 * a big home takes one per subdirectory, so this is the one users meet) and the
 * instances (`fs.inotify.max_user_instances`, one per watcher: editors and dev servers
 * take many). notify, the library under Deno.watchFs, reports the first as "OS file
 * watch limit reached" (the kernel's ENOSPC), the second as EMFILE ("Too many open files").
 */

/** Which limit a watch error hit, or null for any other failure. */
export function watchLimitOf(message: string): "watches" | "instances" | null {
  if (/watch limit|no space left on device|ENOSPC|os error 28\b/i.test(message)) return "watches";
  if (/too many open files|EMFILE|os error 24\b/i.test(message)) return "instances";
  return null;
}

/** The note coverage shows for a watch that failed with `message`. */
export function watchFailureNote(message: string): string {
  switch (watchLimitOf(message)) {
    case "watches":
      return "the inotify watch limit is reached (fs.inotify.max_user_watches; raise it with " +
        "`sudo sysctl fs.inotify.max_user_watches=524288`, and keep it in /etc/sysctl.d/)";
    case "instances":
      return "the inotify instance limit is reached (fs.inotify.max_user_instances; raise it " +
        "with `sudo sysctl fs.inotify.max_user_instances=512`, and keep it in /etc/sysctl.d/)";
    default:
      return `the watch failed: ${message}`;
  }
}
