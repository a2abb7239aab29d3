/**
 * The negative control of reliability-plan H8: the postgres client with no handling of
 * ours — the queries a team command makes (short statements on a small pool), awaited in
 * a loop, errors left to the runtime. Run while PostgreSQL restarts, it shows the shapes a
 * dropped connection takes (uncaught TypeError, CONNECTION_CLOSED with a stack).
 * argv: the database URL.
 */
import postgres from "postgres";

const sql = postgres(Deno.args[0]!, { max: 4, onnotice: () => {} });
const until = Date.now() + 2_500;
while (Date.now() < until) {
  await Promise.all([sql`SELECT pg_sleep(0.01)`, sql`SELECT count(*) FROM pg_class`]);
}
await sql.end({ timeout: 1 });
