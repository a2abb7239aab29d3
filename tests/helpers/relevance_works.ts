/**
 * The relevance suite's hand-written text (issue 27): 32 pieces of work, each a subject
 * (a system: how people name it, its project, facts about it that do not depend on the
 * problem) crossed with a problem (how it shows, facts and fixes that do not depend on the
 * system), plus what only that piece of work says: the user's turns in their own words,
 * the assistant's answers, and the three questions someone would ask to find it again.
 * relevance_corpus.ts tells each piece of work as a target session and crosses the
 * subjects and problems of DIFFERENT works into distractors, so the vocabulary of a
 * target is shared, piecewise, with many sessions that are not about it.
 * Pure data. Invariants the generator relies on:
 *  - every word of `keyword` occurs in the target's prose (`user` + `assistant`); in about
 *    a third of the works no single message holds them all (`spread`), the rest have at
 *    least one message that does;
 *  - problem `opens` hold `{S}` (a subject name goes there) and read in any subject;
 *  - subject and problem text never repeats a work's `user`/`assistant` sentences, so
 *    only the target holds its own details (what `paraphrase` leans on).
 * Above the house's file size on purpose: it is one table of prose, ~25 sentences per work.
 */

/** A system someone works on. */
export interface Subject {
  /** How people name it, first the one a passing remark uses. */
  names: string[];
  project: string;
  /** Sentences about it that hold whatever the problem. */
  facts: string[];
}

/** A kind of trouble, told without naming a system. */
export interface Problem {
  names: string[];
  /** A user's first message; `{S}` takes a subject name. */
  opens: string[];
  facts: string[];
  fixes: string[];
}

/** One piece of work: a subject, a problem and what only its session says. */
export interface Work {
  id: string;
  subject: Subject;
  problem: Problem;
  /** 2–3 distinctive words, as typed into a search box. */
  keyword: string;
  /** The question in natural language. */
  question: string;
  /** The same question in other words (few of the keyword's words, some of the details). */
  paraphrase: string;
  /** The user's turns, in order (the first opens the session). */
  user: string[];
  /** The assistant's answers, in order (the last one closes the work). */
  assistant: string[];
  /** No single message of the target holds every keyword word. */
  spread: boolean;
}

/** The user turns any session may hold (no subject, no problem). */
export const GENERIC_USER = [
  "ok, run the tests again",
  "looks good, commit it",
  "Can you explain why that works?",
  "hmm, still failing for me locally",
  "What about staging?",
  "nice. anything else we should check?",
  "Let's also add a line to the changelog.",
  "ship it",
  "wait, did that break the build?",
  "Can you fix the lint errors while you're at it?",
  "How do I test this myself?",
  "thanks, that's it for today",
  "Can you open a pull request for this?",
  "Is there a test for that case?",
];

/** Sentences any assistant answer may carry (no subject, no problem). */
export const GENERIC_ASSISTANT = [
  "I ran the full test suite and everything passes.",
  "The build is green on CI again.",
  "I added a regression test so this doesn't come back.",
  "One integration test still fails, but it fails on main too, so it's unrelated.",
  "I fixed the two lint errors in the same file.",
  "Let me check the logs before changing anything.",
  "To test it locally, start the dev server and repeat the steps from the issue.",
  "I also added a short note to the changelog.",
  "The error message is clearer now: it names the value that was wrong.",
  "I removed the debug logging I added earlier.",
  "Nothing else in the codebase uses that pattern, I checked with a search.",
  "The pull request is up for review with a description of the change.",
  "If you want, I can also write a short summary for the team channel.",
  "I kept the change small so it's easy to review and to revert if needed.",
  "The fix is behind no flag, it applies to every environment on the next deploy.",
  "Let me know if you see the error again and I'll dig further.",
];

/** Whole tasks with no subject or problem of the works (generic distractor sessions). */
export const GENERIC_TASKS: [string, string][] = [
  [
    "Can you update the README with the new setup steps?",
    "I rewrote the Getting started section: install, copy .env.example, run the seed script, start the dev server. I also removed the old Vagrant instructions.",
  ],
  [
    "Please bump the dependencies and fix whatever breaks.",
    "I upgraded 23 packages. Two needed code changes: the date library renamed its format options, and the HTTP client now throws on 4xx responses by default. Tests pass.",
  ],
  [
    "Rename the helpers in utils to something clearer.",
    "Renamed fmt to formatCurrency, proc to processBatch and chk to isValidEmail, and updated all 41 call sites.",
  ],
  [
    "Add a --verbose flag to the deploy script.",
    "The deploy script now takes --verbose, which prints every command before it runs and keeps the remote output.",
  ],
  [
    "Write tests for the date formatting helpers.",
    "Added 18 tests covering leap years, month ends and locales. One of them found a bug: formatRange dropped the year when both dates were in December. Fixed.",
  ],
  [
    "Clean up the warnings in the build output.",
    "There were 37 warnings: unused imports, a deprecated call in the logger and implicit any in two files. The build output is clean now.",
  ],
  [
    "Review this pull request and point out problems.",
    "Mostly fine. Two things: the new endpoint doesn't check that the user owns the project, and the loop in syncAll makes one request per item where the API accepts batches.",
  ],
  [
    "Set up prettier and fix the formatting.",
    "Prettier is configured with the team's settings and runs in a pre-commit hook. I formatted the whole repo in one separate commit so blame stays readable.",
  ],
  [
    "Add pagination to the admin users list.",
    "The admin users list loads 50 users per page with cursor pagination now, and the search box keeps working across pages.",
  ],
  [
    "Translate the error messages into German.",
    "All 64 error messages have German translations in locales/de.json. A few needed rewording because the English used one word for different things.",
  ],
  [
    "Add a health check endpoint.",
    "GET /healthz returns 200 with the version now, and checks the database connection with a 1 second timeout.",
  ],
  [
    "Can you add type hints to the billing module?",
    "Added type hints to every public function in billing and turned on strict mypy for that package. It found one real bug: a None total on refunds.",
  ],
  [
    "Move the config to environment variables.",
    "All settings are read from environment variables now, with defaults in config.py and a table of them in the README.",
  ],
  [
    "Profile the startup time of the CLI.",
    "Startup took 900 ms, 600 of them importing the cloud SDK even for commands that never use it. I made the import lazy: startup is 280 ms now.",
  ],
];

/** Passing remarks about another piece of work (`{P}` problem name, `{S}` subject name). */
export const REMARKS = [
  "At first I thought this was the {P} in {S} again, but the symptoms are different.",
  "This isn't like the {P} we had in {S} last month; that one is long fixed.",
  "It reminds me of the {P} in {S}, but I don't think it's the same cause.",
];

const S_K8S: Subject = {
  names: ["the kubernetes operator", "our backup operator", "the operator"],
  project: "/home/dev/infra/backup-operator",
  facts: [
    "The operator watches Backup custom resources and creates a CronJob for each one.",
    "It runs as a single replica Deployment in the kubernetes cluster with leader election on.",
    "The CRDs live in config/crd and the controller-runtime version is 0.17.",
  ],
};
const P_DEADLOCK: Problem = {
  names: ["deadlock", "hang"],
  opens: [
    "{S} hangs and never recovers, I think it's a deadlock.",
    "Looks like a deadlock in {S}: it stops doing anything after a while but doesn't crash.",
  ],
  facts: [
    "A thread dump shows two workers each holding one lock and waiting for the other.",
    "Nothing uses CPU while it's stuck, which points at a lock and not a busy loop.",
  ],
  fixes: [
    "I made every path take the locks in the same order, so the cycle can't form anymore.",
    "I replaced the nested locks with a single lock around the shared state.",
  ],
};

const WORKS_A: Work[] = [
  {
    id: "k8s-deadlock",
    subject: S_K8S,
    problem: P_DEADLOCK,
    keyword: "kubernetes deadlock",
    question: "how did we fix the deadlock in the kubernetes operator?",
    paraphrase: "the controller that hung forever when two reconcilers grabbed the same lock",
    spread: true,
    user: [
      "Our kubernetes operator stops reconciling Backup resources after a few minutes. No crash, no error in the logs, it just sits there. Restarting the pod fixes it for a while.",
      "So both reconcilers grab the same locks but in a different order? That would explain why it only happens under load.",
    ],
    assistant: [
      "I took a goroutine dump from the stuck pod with SIGQUIT. Two reconcilers are blocked: the Backup reconciler holds the lease mutex and waits on the status cache lock, while the Schedule reconciler holds the status cache lock and waits on the lease mutex. That's a classic deadlock.",
      "Exactly. Under load both reconcile loops run concurrently, so the window where each holds one lock and wants the other is hit within minutes. I changed both to take the lease mutex first and the cache lock second, and moved the status update out of the critical section.",
      "The deadlock is fixed: the operator has been reconciling for two hours in the kind cluster with 50 Backup objects and no stall. I added a test that runs both reconcilers in parallel with the race detector on.",
    ],
  },
  {
    id: "postgres-migration",
    subject: {
      names: ["the postgres database", "postgres", "the orders database"],
      project: "/home/dev/api",
      facts: [
        "The API talks to postgres 15 through pgbouncer in transaction mode.",
        "Migrations live in db/migrations and run on deploy from the release job.",
        "The orders table has about 40 million rows.",
      ],
    },
    problem: {
      names: ["flaky migration", "migration"],
      opens: [
        "The migration for {S} fails every few deploys and then passes on retry.",
        "Our deploy keeps failing on a migration in {S}, but only sometimes.",
      ],
      facts: [
        "The failing step times out waiting for a lock on the table.",
        "Rerunning the migration by hand always works.",
      ],
      fixes: [
        "I split the migration so the schema change and the backfill run separately.",
        "The migration now retries with a short lock timeout instead of waiting forever.",
      ],
    },
    keyword: "flaky postgres migration",
    question: "why did the postgres migration keep failing on deploy?",
    paraphrase: "the schema change that timed out waiting on the orders table during releases",
    spread: true,
    user: [
      "The deploy failed again on the migration that adds the customer_ref column. It passed on the second try. Third time this week, and the postgres logs say canceling statement due to lock timeout.",
      "Can we make it not flaky? I don't want to babysit every release.",
    ],
    assistant: [
      "The migration runs ALTER TABLE orders ADD COLUMN with a default and a NOT NULL constraint in one transaction. That needs an ACCESS EXCLUSIVE lock on orders, and it queues behind the long analytics query that runs every 15 minutes. When the deploy lands while that query runs, the lock wait hits the timeout.",
      "I split it into three steps: add the column nullable, backfill in batches of 10,000 rows, then add the constraint as NOT VALID and validate it separately. Each step sets lock_timeout to 5s and retries up to 5 times, so a long reader only delays it.",
      "I ran the steps 20 times against a copy of production with the analytics query looping: 0 failures. The flaky migration should be gone.",
    ],
  },
  {
    id: "css-grid",
    subject: {
      names: ["the dashboard", "the card grid", "the dashboard page"],
      project: "/home/dev/web.app",
      facts: [
        "The dashboard is a grid of cards defined in dashboard.css with named areas.",
        "We support Safari 16 and up, plus the last two Chrome and Firefox versions.",
        "The cards come from a React component that sets inline heights.",
      ],
    },
    problem: {
      names: ["layout bug", "layout"],
      opens: [
        "The layout of {S} breaks on small screens, things overlap.",
        "There's a layout bug in {S}: the columns collapse into each other on mobile.",
      ],
      facts: ["It only happens below 600px width.", "Safari renders it differently from Chrome."],
      fixes: [
        "I changed the breakpoint and let the columns wrap instead of shrinking.",
        "I removed the fixed heights so the content decides the row size.",
      ],
    },
    keyword: "css grid layout",
    question: "how did we fix the css grid layout on the dashboard?",
    paraphrase: "cards sitting on top of each other on narrow phones",
    spread: false,
    user: [
      "On the dashboard the cards overlap on phones, the revenue card sits on top of the orders one. Looks fine on desktop. Can you look at the CSS?",
      "It still overlaps in Safari on my iPhone.",
    ],
    assistant: [
      "The grid uses grid-template-areas with three named columns, and the media query at 600px switches to one column, but the cards keep their grid-area names from the desktop layout, so two cards land in the same cell. That's why they overlap.",
      "Safari also ignores the row heights we set inline from the React component, so the rows collapse. I removed the inline heights and switched the rows to grid-auto-rows: minmax(180px, auto).",
      "The dashboard's CSS grid has its own mobile layout now, with grid-template-areas below 600px, and the cards no longer overlap in Chrome, Firefox or Safari. I added a Playwright screenshot test at 375px width.",
    ],
  },
  {
    id: "tls-expired",
    subject: {
      names: ["the ingress", "the api.example.com endpoint", "the load balancer"],
      project: "/srv/ops",
      facts: [
        "Certificates are issued by cert-manager and stored as kubernetes secrets.",
        "The load balancer terminates TLS and forwards plain HTTP to nginx.",
        "Monitoring only checks the main domain, not the internal ones.",
      ],
    },
    problem: {
      names: ["expired certificate", "certificate"],
      opens: [
        "Clients get an expired certificate error when they connect to {S}.",
        "Something in {S} is serving an expired certificate since this morning.",
      ],
      facts: [
        "openssl s_client shows the leaf certificate expired yesterday.",
        "Browsers show NET::ERR_CERT_DATE_INVALID.",
      ],
      fixes: [
        "I renewed the certificate and reloaded the service so it picks up the new one.",
        "I added an alert that fires 14 days before any certificate expires.",
      ],
    },
    keyword: "expired tls certificate",
    question: "what did we do when the tls certificate expired?",
    paraphrase: "cert-manager stopped renewing and browsers said the connection was not private",
    spread: false,
    user: [
      "Customers can't reach api.example.com, browsers say the connection is not private. Did the TLS certificate run out?",
      "Why didn't cert-manager renew it on its own?",
    ],
    assistant: [
      "Yes: the certificate on the ingress expired at 02:00 UTC, openssl s_client shows notAfter was today. The Certificate resource in cert-manager has been in a failed state for 40 days.",
      "The HTTP-01 challenge fails because we added a redirect to www for all paths, including /.well-known/acme-challenge, so Let's Encrypt never sees the token. cert-manager has been retrying and failing quietly for a month.",
      "I excluded the challenge path from the redirect and deleted the failed CertificateRequest; cert-manager issued a new certificate in two minutes. The expired TLS certificate is replaced, and a Prometheus alert now fires for certificates that expire in less than 14 days.",
    ],
  },
  {
    id: "websocket-leak",
    subject: {
      names: ["the websocket server", "the realtime gateway", "our ws server"],
      project: "/home/dev/realtime",
      facts: [
        "The gateway is a Node.js websocket server using the ws library behind an ALB.",
        "Each client subscribes to a few channels and we fan out from redis pub/sub.",
        "It usually holds around 20k concurrent connections per instance.",
      ],
    },
    problem: {
      names: ["memory leak", "memory"],
      opens: [
        "Memory of {S} keeps growing until it gets OOM killed, looks like a leak.",
        "I think {S} has a memory leak, RSS climbs all day.",
      ],
      facts: [
        "A heap snapshot shows the same objects piling up between snapshots.",
        "Memory drops back only after a restart.",
      ],
      fixes: [
        "I unregister the handler on shutdown so the objects can be collected.",
        "The cache is bounded now, with an LRU and a maximum size.",
      ],
    },
    keyword: "websocket memory leak",
    question: "how did we find the memory leak in the websocket server?",
    paraphrase: "listeners piling up on the shared subscriber every time a client disconnected",
    spread: true,
    user: [
      "The websocket server gets OOM killed every night around 3am. Memory goes up steadily all day even when the number of connections is flat.",
      "Could it be the redis subscriptions?",
    ],
    assistant: [
      "I took two heap snapshots an hour apart. The growth is in closures held by the EventEmitter of the redis subscriber: every connection adds a 'message' listener, and nothing removes it when the client disconnects.",
      "Yes, that's where it is. On close we drop the connection from the channel map but not its listener on the shared subscriber, so each listener keeps the whole socket object alive. Node even warns about MaxListenersExceeded in the logs, we just never looked.",
      "Fixed the leak: listeners are removed in the close handler, and the channel fan-out uses one listener per channel instead of one per connection. Under a load test with 5,000 connects and disconnects per minute the heap stays flat at 180 MB.",
    ],
  },
  {
    id: "go-race",
    subject: {
      names: ["the ingest service", "the ingest workers", "the importer backend"],
      project: "/home/dev/ingest",
      facts: [
        "The ingest service is written in Go and pulls jobs from a channel.",
        "Each job parses a CSV upload and writes batches to the warehouse.",
        "Metrics are exported with the prometheus client and graphed in Grafana.",
      ],
    },
    problem: {
      names: ["race condition", "race"],
      opens: [
        "There's a race condition in {S}, results are sometimes wrong.",
        "I suspect a race in {S}: the counts don't add up under load.",
      ],
      facts: [
        "The race detector flags a concurrent write to the same variable.",
        "It only shows up with more than one worker running.",
      ],
      fixes: [
        "I guarded the shared state with a mutex.",
        "Each worker gets its own copy now instead of sharing one.",
      ],
    },
    keyword: "go worker pool race",
    question: "how did we fix the race in the go worker pool?",
    paraphrase: "upload totals that came out wrong when several goroutines wrote the same map",
    spread: false,
    user: [
      "The ingest totals are off sometimes: a CSV with 10,000 rows reports 9,987 imported. It only happens in production, where the worker pool has 16 workers.",
      "Can we make sure this doesn't come back?",
    ],
    assistant: [
      "Running the tests with go test -race shows a data race: the workers increment counts in a shared map[string]int without any synchronization. Two goroutines writing the same map lose updates, and sometimes the runtime even panics with concurrent map writes.",
      "I gave each worker its own counts and merge them after the pool drains, so there's no shared state left. The merge runs after wg.Wait(), which gives the ordering we need.",
      "The race in the Go worker pool is fixed. CI runs go test -race on the ingest package now, and a new test imports the same file with 32 workers and checks the total.",
    ],
  },
  {
    id: "gha-cache",
    subject: {
      names: ["GitHub Actions", "the CI workflow", "the build workflow"],
      project: "/home/dev/shop",
      facts: [
        "The workflow in .github/workflows/ci.yml runs lint, unit tests and the e2e suite.",
        "It's a pnpm monorepo with about 30 packages.",
        "The runners are the standard ubuntu-latest hosted ones.",
      ],
    },
    problem: {
      names: ["cache", "caching"],
      opens: [
        "Can we add caching to {S}? Every run downloads everything again.",
        "The cache in {S} never hits, it rebuilds from scratch every time.",
      ],
      facts: [
        "The cache key changes on every run because it includes a timestamp.",
        "Restoring the cache takes longer than it saves.",
      ],
      fixes: [
        "I keyed the cache on a hash of the inputs so it only changes when they do.",
        "I added a fallback key so partial hits still help.",
      ],
    },
    keyword: "github actions cache",
    question: "how did we set up caching in github actions?",
    paraphrase: "CI downloading every pnpm package again on each run",
    spread: false,
    user: [
      "CI takes 14 minutes and most of it is pnpm install. Can you set up a cache in GitHub Actions for the monorepo?",
      "The cache gets saved but the next run still misses.",
    ],
    assistant: [
      "I added actions/cache for the pnpm store, keyed on the hash of pnpm-lock.yaml, plus actions/setup-node with cache: pnpm for the metadata.",
      "The key included github.run_id from an old template, so every run wrote a new entry and never restored one. I removed it and added restore-keys with the OS prefix, so a lockfile change still gets a partial hit.",
      "With the store restored, install takes 40 seconds instead of 9 minutes, and the whole workflow is down to 5 minutes. The last three runs show a hit.",
    ],
  },
  {
    id: "redis-pool",
    subject: {
      names: ["redis", "the session store", "the rate limiter"],
      project: "/home/dev/api",
      facts: [
        "Sessions and rate-limit counters live in a redis 7 instance on ElastiCache.",
        "The API uses ioredis with a small set of clients per worker process.",
        "We run 12 API workers per host.",
      ],
    },
    problem: {
      names: ["connection pool", "connections"],
      opens: [
        "{S} runs out of connections at peak, requests start failing with timeouts.",
        "We're exhausting the connection pool in {S} during traffic spikes.",
      ],
      facts: [
        "Every connection is busy during the spike.",
        "Some connections are never returned after an error.",
      ],
      fixes: [
        "I release the connection in a finally block so errors don't leak it.",
        "I raised the pool size and added a queue timeout.",
      ],
    },
    keyword: "redis connection pool",
    question: "why did the api run out of redis connections?",
    paraphrase: "the rate limiter never gave its client back when EXEC failed",
    spread: false,
    user: [
      "During the flash sale the API started returning 500s: ioredis says it can't get a connection, pool exhausted. Redis itself was fine, CPU at 20 percent.",
      "Why only during the sale?",
    ],
    assistant: [
      "The rate limiter borrows a client from the connection pool, runs MULTI/EXEC, and returns it on the success path only. When EXEC fails with a timeout the client is never released, so under load the pool of 10 drains in minutes.",
      "During the sale redis latency went up enough for some EXECs to time out, and each timeout leaked one client. Normal traffic almost never times out, so we never noticed.",
      "I moved the release into a finally block and set a 200 ms acquire timeout so requests fail fast instead of queueing. The redis connection pool stays under 6 in use during a replay of the sale traffic.",
    ],
  },
];

const WORKS_B: Work[] = [
  {
    id: "checkout-duplicates",
    subject: {
      names: ["the checkout page", "checkout", "the payment form"],
      project: "/home/dev/shop",
      facts: [
        "The checkout page is a React form that posts to /api/orders.",
        "Payment is confirmed client-side before the order is created.",
        "Mobile traffic is about 70 percent of checkouts.",
      ],
    },
    problem: {
      names: ["duplicate orders", "duplicates"],
      opens: [
        "Some customers get charged twice, we see duplicate orders from {S}.",
        "{S} sometimes creates duplicates when people click twice.",
      ],
      facts: [
        "The two orders are created within 300 ms of each other.",
        "Both requests carry the same cart id.",
      ],
      fixes: [
        "I added an idempotency key so the second request returns the first result.",
        "The submit button is disabled while the request is in flight.",
      ],
    },
    keyword: "duplicate orders checkout",
    question: "how did we stop duplicate orders from the checkout page?",
    paraphrase: "customers charged twice after a double tap on pay",
    spread: false,
    user: [
      "Support forwarded five customers who were charged twice yesterday. In the admin I see two orders for each, a few hundred milliseconds apart.",
      "Is disabling the button enough?",
    ],
    assistant: [
      "The checkout form submits on button click and on Enter, and on mobile a double tap fires two submits before React re-renders the disabled state. Both requests reach /api/orders and both create an order, hence the duplicate orders.",
      "Not on its own: a retry on a flaky network would still create a second order. I added a key generated when the checkout page loads; the API stores it with a unique index and returns the existing order when it sees the key again.",
      "The button is disabled synchronously with a ref now, and the API side is idempotent. I replayed yesterday's double requests against staging and each produced one order.",
    ],
  },
  {
    id: "terraform-lock",
    subject: {
      names: ["terraform", "the infra repo", "our infrastructure code"],
      project: "/home/dev/infra",
      facts: [
        "Terraform state is kept in an S3 backend with a DynamoDB table for locking.",
        "Plans run in CI on every pull request and apply runs on merge.",
        "There are separate workspaces for staging and production.",
      ],
    },
    problem: {
      names: ["stuck lock", "lock"],
      opens: [
        "{S} says the state is locked and refuses to run.",
        "A lock on {S} was never released after a cancelled job.",
      ],
      facts: [
        "The lock info shows a job that was cancelled an hour ago.",
        "Nobody else is running anything right now.",
      ],
      fixes: [
        "I removed the stale lock after checking nobody was running.",
        "CI cancels gracefully now, so the lock gets released.",
      ],
    },
    keyword: "terraform state lock",
    question: "how did we release the stuck terraform state lock?",
    paraphrase: "plan refused to run because a cancelled CI job still held the dynamodb entry",
    spread: false,
    user: [
      "terraform plan fails with Error acquiring the state lock. Nobody is running an apply, I asked the team.",
      "How do we stop this from happening again?",
    ],
    assistant: [
      "The lock in the DynamoDB table belongs to a CI job from yesterday that was cancelled mid-apply. GitHub killed the runner, so terraform never got to release it.",
      "I checked the state serial was consistent and ran terraform force-unlock with that lock ID. For next time, the apply job traps SIGTERM, and a concurrency group makes a new run wait instead of cancelling the running apply.",
      "The state lock is gone and plan runs again. I also wrote the force-unlock steps into the infra README.",
    ],
  },
  {
    id: "docker-size",
    subject: {
      names: ["the docker image", "the API image", "our Dockerfile"],
      project: "/home/dev/api",
      facts: [
        "The image is built from the Dockerfile at the repo root and pushed to ECR.",
        "It bundles the Python app, its virtualenv and a few system packages.",
        "Deploys pull the image on every node.",
      ],
    },
    problem: {
      names: ["image size", "huge image"],
      opens: [
        "The artifact for {S} is huge, pulls take minutes.",
        "Can we shrink {S}? The size doubled.",
      ],
      facts: [
        "Most of the size comes from build tools left in the final layer.",
        "The layer with the dependencies is over a gigabyte.",
      ],
      fixes: [
        "I switched to a multi-stage build so only the runtime files end up in the final artifact.",
        "I moved to a slim base and cleaned the package cache in the same layer.",
      ],
    },
    keyword: "docker image size",
    question: "how did we make the docker image smaller?",
    paraphrase: "deploys were slow because every node pulled a 2 GB container with gcc inside",
    spread: false,
    user: [
      "The API image is 2.3 GB and deploys are slow because every node pulls it. Can we cut the docker image size?",
      "Do we still need gcc in there?",
    ],
    assistant: [
      "Looking at docker history, 1.1 GB is the build-essential and gcc layer we need to compile the psycopg2 and numpy wheels, and another 600 MB is the pip cache.",
      "Only at build time. I rewrote the Dockerfile as a multi-stage build: the builder stage compiles the wheels, the final stage starts from python:3.12-slim and installs only the wheels, and --no-cache-dir keeps pip's cache out.",
      "The image is 310 MB now, down from 2.3 GB, and a cold pull on a new node takes 12 seconds.",
    ],
  },
  {
    id: "celery-timeout",
    subject: {
      names: ["the celery workers", "the task queue", "our background jobs"],
      project: "/home/dev/data-pipeline",
      facts: [
        "Background jobs run on celery with RabbitMQ as the broker.",
        "The report tasks call an external PDF service over HTTP.",
        "There are four worker containers with a concurrency of eight each.",
      ],
    },
    problem: {
      names: ["timeout", "timeouts"],
      opens: [
        "Jobs in {S} keep hitting a timeout and get retried forever.",
        "{S} times out on the long requests.",
      ],
      facts: [
        "The timeout is 30 seconds and the slow calls take about 45.",
        "Retries make it worse because they pile up.",
      ],
      fixes: [
        "I raised the timeout for that call only and made the retry back off exponentially.",
        "The slow work runs asynchronously now and the caller polls for the result.",
      ],
    },
    keyword: "celery task timeout",
    question: "why were the celery report tasks timing out?",
    paraphrase: "the PDF job that kept retrying and clogged the queue for everything else",
    spread: true,
    user: [
      "The monthly report tasks never finish, flower shows them retrying again and again. Other celery tasks are stuck behind them.",
      "What limit should we use for the PDF call?",
    ],
    assistant: [
      "Each report task calls the PDF service with requests and a 30 second timeout; the big reports take 45 seconds to render, so every call times out, the task retries with no backoff, and each retry keeps a worker slot busy.",
      "I set the PDF call's timeout to 120 seconds, added exponential backoff with max_retries=3, and set soft_time_limit=300 on the task so a stuck one frees its worker.",
      "Report tasks go to their own queue now, so they can't block the others. The September reports finished in 11 minutes without a single retry.",
    ],
  },
  {
    id: "kafka-lag",
    subject: {
      names: ["the kafka consumer", "the billing consumer", "the events consumer"],
      project: "/home/dev/billing",
      facts: [
        "The billing service consumes the invoice-events topic from kafka with 24 partitions.",
        "Consumers are in one group, one per pod, scaled by the HPA.",
        "Each message triggers a write to postgres and a call to the tax API.",
      ],
    },
    problem: {
      names: ["lag", "backlog"],
      opens: [
        "{S} is falling behind, the backlog keeps growing.",
        "The lag on {S} spiked after the deploy.",
      ],
      facts: [
        "It grows on a few partitions only.",
        "Every deploy triggers a rebalance that pauses consumption.",
      ],
      fixes: [
        "I enabled cooperative rebalancing so a deploy doesn't stop every consumer.",
        "Processing is batched now, which roughly tripled throughput.",
      ],
    },
    keyword: "kafka consumer lag",
    question: "how did we fix the kafka consumer lag after deploys?",
    paraphrase: "billing fell hours behind on invoice events whenever pods restarted",
    spread: true,
    user: [
      "Billing is 3 hours behind again. Consumer lag on invoice-events shot up after this morning's deploy and it's not catching up.",
      "Is it the rebalancing?",
    ],
    assistant: [
      "Every deploy restarts the pods one by one, and each restart triggers an eager rebalance in the group: all 24 partitions are revoked and reassigned, and nothing is consumed for about 40 seconds each time. With 8 pods that's over 5 minutes without processing.",
      "Yes. I switched the kafka consumer to the CooperativeStickyAssignor so only the moving partitions pause, and set a static group.instance.id per pod so a restart within session.timeout.ms doesn't rebalance at all.",
      "I also batch the postgres writes per poll instead of one insert per message. After the change the backlog peaks at 2,000 messages during a deploy and clears within a minute.",
    ],
  },
  {
    id: "nginx-502",
    subject: {
      names: ["nginx", "the reverse proxy", "the proxy in front of the app"],
      project: "/srv/ops",
      facts: [
        "nginx proxies to the gunicorn upstream on port 8000.",
        "The config lives in /etc/nginx/sites-enabled/app.conf and is managed by ansible.",
        "Access logs are shipped to Loki.",
      ],
    },
    problem: {
      names: ["502 errors", "bad gateway"],
      opens: [
        "We're getting 502 errors from {S} a few times an hour.",
        "Users see a bad gateway page from {S} after deploys.",
      ],
      facts: [
        "The errors cluster right after the workers restart.",
        "The upstream logs show nothing for the failed requests.",
      ],
      fixes: [
        "Deploys drain connections now before the workers restart.",
        "I added a retry for idempotent requests on the proxy.",
      ],
    },
    keyword: "nginx 502",
    question: "what caused the 502 errors from nginx?",
    paraphrase: "gunicorn closing idle keepalive connections before the proxy stopped reusing them",
    spread: false,
    user: [
      "We get random 502 errors from nginx, maybe 20 an hour, mostly right after quiet periods.",
      "So it's a keepalive thing?",
    ],
    assistant: [
      "The nginx error log says upstream prematurely closed connection while reading response header. gunicorn's keepalive is 2 seconds, but nginx keeps idle upstream connections for 60 seconds, so it reuses connections gunicorn already closed.",
      "Yes. I set gunicorn --keep-alive 75 so it outlives nginx's keepalive_timeout, and added proxy_next_upstream error for idempotent requests.",
      "No 502 in the last 24 hours in Loki, down from about 480 a day.",
    ],
  },
  {
    id: "ios-crash",
    subject: {
      names: ["the iOS app", "the Swift app", "the iPhone app"],
      project: "/home/dev/mobile",
      facts: [
        "The iOS app is SwiftUI with a few UIKit screens left over.",
        "We ship through TestFlight first, then the App Store.",
        "Crash reports come from Crashlytics.",
      ],
    },
    problem: {
      names: ["crash on launch", "crash"],
      opens: [
        "{S} crashes right on launch for some users.",
        "Since the last release {S} crashes at startup.",
      ],
      facts: [
        "The stack trace points at the code that reads saved data.",
        "It only affects users upgrading from the previous version.",
      ],
      fixes: [
        "I made the decoding tolerant of the old format instead of failing hard.",
        "A migration step converts the old data on first launch now.",
      ],
    },
    keyword: "ios crash launch",
    question: "why did the ios app crash on launch after the update?",
    paraphrase: "the app died at startup for people upgrading because of old saved settings",
    spread: true,
    user: [
      "Crashlytics shows a spike of crashes on launch in 4.12, only on iOS, about 8 percent of sessions.",
      "Only people who upgraded?",
    ],
    assistant: [
      "The stack trace points at SettingsStore.load(): we decode the saved value with try!, and 4.12 added a non-optional field to the Settings struct, so decoding the settings saved by 4.11 throws and the app dies before the first screen.",
      "Yes, fresh installs have no saved settings, so they never hit it. I made the new field optional with a default and replaced the try! with a fallback to defaults plus a logged error.",
      "Built 4.12.1 with the fix and tested the upgrade path from 4.11 on a device: no crash on launch. The hotfix is in TestFlight.",
    ],
  },
  {
    id: "rust-utf8",
    subject: {
      names: ["the rust CLI", "the import tool", "our command line tool"],
      project: "/home/dev/tools/importer",
      facts: [
        "The importer is a rust CLI built with clap that reads exports from customers.",
        "It processes files line by line and writes JSON lines to stdout.",
        "Releases are built for linux, macOS and windows by cargo-dist.",
      ],
    },
    problem: {
      names: ["encoding bug", "garbled text"],
      opens: [
        "{S} chokes on some customer files, something about the encoding.",
        "Names with accents come out garbled in {S}.",
      ],
      facts: [
        "The file mixes two encodings.",
        "The broken rows all have non-ASCII characters.",
      ],
      fixes: [
        "Input is detected and converted to UTF-8 before parsing.",
        "Invalid bytes are replaced instead of aborting the whole file.",
      ],
    },
    keyword: "rust utf-8 panic",
    question: "why did the rust importer panic on some files?",
    paraphrase: "customer exports with accented names and a byte order mark broke the tool",
    spread: true,
    user: [
      "The importer crashes on an export from a French customer: thread 'main' panicked at 'byte index 17 is not a char boundary'.",
      "Can it just skip bad bytes?",
    ],
    assistant: [
      "The file starts with a UTF-8 BOM and has Latin-1 bytes inside some names, like Hélène with a single 0xE9. We read lines with from_utf8_unchecked and then slice the name at a fixed byte offset, which lands inside a multi-byte character.",
      "Better than skipping: I read raw bytes, strip the BOM, try the strict decoder and fall back to Windows-1252 for the line, and I slice with char_indices so we never cut inside a character.",
      "The rust CLI imports the customer's file now with the accented names intact, and the tests have fixture files with a BOM and mixed encodings. No more panic.",
    ],
  },
];

const WORKS_C: Work[] = [
  {
    id: "es-disk",
    subject: {
      names: ["elasticsearch", "the search cluster", "the logs cluster"],
      project: "/srv/ops",
      facts: [
        "The search cluster is three elasticsearch 8 data nodes with 1 TB disks.",
        "Daily indices are created by the ingest pipeline.",
        "Kibana sits in front for the support team.",
      ],
    },
    problem: {
      names: ["disk full", "disk space"],
      opens: [
        "{S} ran out of disk space last night.",
        "Disk on {S} is at 95 percent and writes fail.",
      ],
      facts: ["Old files are never deleted.", "One directory grew by 200 GB in a week."],
      fixes: [
        "I added a retention policy that deletes data older than 30 days.",
        "I raised the disk size and added an alert at 80 percent.",
      ],
    },
    keyword: "elasticsearch disk watermark",
    question: "what did we do when elasticsearch ran out of disk?",
    paraphrase:
      "logs stopped coming in because the indices went read-only and old ones were never deleted",
    spread: false,
    user: [
      "Elasticsearch stopped accepting logs at 4am, indices are read-only. Kibana shows nothing new since then.",
      "Can we make sure old indices get deleted?",
    ],
    assistant: [
      "Two data nodes passed the flood-stage disk watermark at 95 percent, so elasticsearch put index.blocks.read_only_allow_delete on every index. The ILM policy that should delete indices after 30 days was never attached to the new index template.",
      "I attached the ILM policy to the template, deleted the indices older than 30 days to free 1.4 TB, and removed the read-only block. Usage is at 61 percent now.",
      "I also added an alert when any node crosses the low watermark at 85 percent, so we get a day or two of warning.",
    ],
  },
  {
    id: "s3-denied",
    subject: {
      names: ["the uploads bucket", "S3", "the file uploads"],
      project: "/home/dev/api",
      facts: [
        "User uploads go straight to an S3 bucket with presigned URLs.",
        "The bucket has versioning on and a lifecycle rule to Glacier after 90 days.",
        "The API runs with an IAM role attached to the task.",
      ],
    },
    problem: {
      names: ["access denied", "permission error"],
      opens: [
        "{S} returns access denied since the last deploy.",
        "Getting a permission error from {S} in production only.",
      ],
      facts: [
        "It works locally with my own credentials.",
        "The error shows the role name the service runs as.",
      ],
      fixes: [
        "I added the missing permission to the role's policy.",
        "The service uses the right role now instead of the default one.",
      ],
    },
    keyword: "s3 access denied",
    question: "why did s3 uploads fail with access denied?",
    paraphrase: "presigned upload URLs that got a 403 once encryption with a KMS key was turned on",
    spread: false,
    user: [
      "Uploads fail in production with AccessDenied from S3. Locally with my credentials it works.",
      "Which permission was missing?",
    ],
    assistant: [
      "The presigned PUT URLs are signed by the task role, and since last week's change the upload sends x-amz-server-side-encryption: aws:kms. The role can write to the bucket but has no kms:GenerateDataKey on the bucket's key, so S3 answers 403 access denied.",
      "kms:GenerateDataKey and kms:Decrypt on the uploads key. I added them to the task role's policy in terraform.",
      "Uploads work in production again; I tested a 50 MB file through the presigned flow.",
    ],
  },
  {
    id: "oauth-refresh",
    subject: {
      names: ["the login flow", "OAuth login", "the sign-in"],
      project: "/home/dev/web.app",
      facts: [
        "Login uses OAuth 2 with PKCE against Google and GitHub.",
        "Access tokens live for an hour and the web app keeps them in memory.",
        "The auth code lives in src/auth and is shared by web and mobile.",
      ],
    },
    problem: {
      names: ["token refresh", "invalid token"],
      opens: [
        "{S} fails after a while with an invalid token error.",
        "{S} keeps asking people to sign in again.",
      ],
      facts: [
        "The failures start some time after login, never right away.",
        "It happens more for people who keep the app open all day.",
      ],
      fixes: [
        "The refresh happens behind a single in-flight promise now.",
        "I refresh a little before expiry and share the result between callers.",
      ],
    },
    keyword: "oauth refresh token",
    question: "why were users logged out every hour?",
    paraphrase: "two browser tabs fighting over the same token and kicking people out",
    spread: false,
    user: [
      "People get logged out after exactly an hour, even while they're using the app.",
      "Is it because of multiple tabs?",
    ],
    assistant: [
      "The access token lives an hour and the refresh kicks in on a 401, but the refresh token rotates: each use returns a new one and invalidates the old. With two tabs open both refresh at once, the second uses a refresh token that was just rotated, the provider revokes the whole token family, and both tabs end up logged out.",
      "Yes, the tabs race each other. I moved the refresh behind a BroadcastChannel lock so only one tab refreshes and shares the new tokens, and each tab refreshes a minute before expiry instead of waiting for a 401.",
      "I left three tabs open for four hours and stayed logged in. The OAuth refresh token rotation is covered by a test with two simulated tabs now.",
    ],
  },
  {
    id: "vite-slow",
    subject: {
      names: ["the frontend build", "vite", "the web bundle"],
      project: "/home/dev/web.app",
      facts: [
        "The frontend is built with vite and TypeScript, about 1,200 modules.",
        "Source maps are uploaded to Sentry after each build.",
        "We use a few legacy CommonJS packages that need pre-bundling.",
      ],
    },
    problem: {
      names: ["slow build", "build time"],
      opens: [
        "Building {S} takes forever now, over ten minutes.",
        "Build time for {S} tripled this month.",
      ],
      facts: [
        "Most of the time is spent before anything is written to disk.",
        "It's as slow on a laptop as on CI.",
      ],
      fixes: [
        "I moved the expensive check to a separate step that runs in parallel.",
        "I turned off the slow plugin for development builds.",
      ],
    },
    keyword: "vite build slow",
    question: "how did we speed up the vite build?",
    paraphrase: "the frontend bundle took twelve minutes because of type checking and source maps",
    spread: false,
    user: [
      "The frontend build takes 12 minutes now, it used to be 3. It's vite, nothing changed in the config that I know of.",
      "Do we need the source maps in CI?",
    ],
    assistant: [
      "I profiled with --debug: vite-plugin-checker runs a full tsc type check inside the build, which takes 7 minutes since the monorepo grew, and the Sentry plugin generates and uploads hidden source maps for 1,200 modules.",
      "Only for release builds. I moved type checking to a separate tsc --noEmit job that runs in parallel, and source maps are on only when RELEASE=1.",
      "A CI build takes 2 minutes 40 seconds now. The slow part was never vite itself.",
    ],
  },
  {
    id: "cron-timezone",
    subject: {
      names: ["the nightly export", "the reports cron", "the scheduled export"],
      project: "/home/dev/data-pipeline",
      facts: [
        "The export runs from a crontab on the jobs host and mails a CSV to finance.",
        "The script is a Python file that queries the reporting replica.",
        "Finance reads the file first thing in the morning.",
      ],
    },
    problem: {
      names: ["timezone bug", "wrong time"],
      opens: [
        "{S} runs at the wrong time since the clocks changed.",
        "Times in {S} are off by one hour.",
      ],
      facts: [
        "The server is in UTC but the schedule was written in local time.",
        "It started on the daylight saving switch.",
      ],
      fixes: [
        "Times are stored in UTC now and converted only for display.",
        "I set the timezone explicitly instead of relying on the host.",
      ],
    },
    keyword: "cron timezone",
    question: "why did the nightly export run at the wrong time?",
    paraphrase: "finance got the CSV an hour late after the clocks went forward",
    spread: false,
    user: [
      "Finance says the nightly CSV arrived at 3am instead of 2am since Sunday.",
      "Can we make it follow Paris time?",
    ],
    assistant: [
      "The crontab entry is 0 1 * * * and the jobs host runs in UTC. In winter that's 02:00 in Paris; since the clocks went forward on Sunday, 01:00 UTC is 03:00 Paris time.",
      "Yes: cron on this host supports CRON_TZ, so I set CRON_TZ=Europe/Paris on that line and changed it to 0 2 * * *. The script also used the host timezone to compute yesterday's date, so it uses Europe/Paris explicitly now.",
      "Tomorrow's run will be at 02:00 Paris time whatever the season, and a test covers the date range around the daylight saving switch.",
    ],
  },
  {
    id: "grpc-deadline",
    subject: {
      names: ["the pricing service", "the gRPC service", "pricing"],
      project: "/home/dev/pricing",
      facts: [
        "Pricing is a gRPC service in Go called by the checkout and the quote API.",
        "Clients are generated from the proto files in the shared protos repo.",
        "It runs on three pods behind a headless kubernetes service.",
      ],
    },
    problem: {
      names: ["slow calls", "latency"],
      opens: [
        "Calls to {S} fail under load, callers give up.",
        "{S} answers too slowly at peak.",
      ],
      facts: [
        "p99 latency jumped from 80 ms to 2 seconds.",
        "The slow requests all hit the same backend.",
      ],
      fixes: [
        "I added a cache in front of the slow backend.",
        "Work is cancelled now when the caller stops waiting.",
      ],
    },
    keyword: "grpc deadline exceeded",
    question: "why did calls to the pricing service fail with deadline exceeded?",
    paraphrase: "quotes failing because the backend kept working after the caller had given up",
    spread: true,
    user: [
      "Checkout sees DEADLINE_EXCEEDED from pricing at peak, maybe 3 percent of calls.",
      "Why does it keep working after the client gave up?",
    ],
    assistant: [
      "The client sets a 500 ms deadline, but the pricing service doesn't pass it on to its calls to the tax backend, which take up to 2 seconds at peak. Requests pile up after the callers are gone, and the queue slows everything down.",
      "Because the handler uses context.Background() for the downstream calls instead of the request's ctx. I passed ctx through so the gRPC deadline cancels the tax call, and cached tax rates for 5 minutes.",
      "The exceeded errors dropped from 3 percent to 0.02 percent at the same traffic.",
    ],
  },
  {
    id: "pandas-oom",
    subject: {
      names: ["the feature job", "the data pipeline", "the parquet job"],
      project: "/home/dev/ml/features",
      facts: [
        "The feature job loads a day of events with pandas and writes parquet.",
        "It runs on a 16 GB worker in the batch queue.",
        "Input is about 30 million rows of JSON lines per day.",
      ],
    },
    problem: {
      names: ["out of memory", "OOM"],
      opens: [
        "{S} dies with out of memory on big inputs.",
        "{S} gets killed by the OOM killer every night.",
      ],
      facts: [
        "Memory peaks at several times the input size.",
        "Everything is loaded into memory at once.",
      ],
      fixes: [
        "I process the input in chunks instead of loading it whole.",
        "Smaller column types halved the peak.",
      ],
    },
    keyword: "pandas out of memory",
    question: "how did we stop the feature job running out of memory?",
    paraphrase: "the nightly job reading a whole day of events at once with object columns",
    spread: false,
    user: [
      "The feature job got OOM killed again last night. It reads yesterday's events and writes parquet.",
      "Can't we just give it a bigger machine?",
    ],
    assistant: [
      "pandas.read_json(lines=True) loads all 30 million rows at once with every column as object dtype, so it peaks at about 40 GB on a 16 GB worker and runs out of memory.",
      "We could, but it'll grow again. I read the input in chunks of 500,000 rows, convert the string columns to category and the ids to int32, and append each chunk to the parquet file.",
      "The peak is 3.1 GB now and the job finishes in 18 minutes instead of crashing.",
    ],
  },
  {
    id: "graphql-n1",
    subject: {
      names: ["the GraphQL API", "the graphql server", "our resolvers"],
      project: "/home/dev/api",
      facts: [
        "The GraphQL API is Apollo Server on Node with a postgres backend through Prisma.",
        "The mobile apps use persisted queries.",
        "Schema changes are checked in CI against the registry.",
      ],
    },
    problem: {
      names: ["too many queries", "slow page"],
      opens: [
        "{S} fires hundreds of queries for one page.",
        "{S} is slow and the database log is full of the same query.",
      ],
      facts: [
        "Each item in the list triggers its own query.",
        "The slow log shows the same statement with different ids.",
      ],
      fixes: [
        "I batch the lookups into one query per request.",
        "The related records are loaded with a join now.",
      ],
    },
    keyword: "graphql n+1 queries",
    question: "why was the graphql orders query so slow?",
    paraphrase: "each order on the list fetched its customer separately, two hundred round trips",
    spread: true,
    user: [
      "The orders screen in the mobile app takes 4 seconds. The GraphQL query itself is small.",
      "Is there a standard fix for this?",
    ],
    assistant: [
      "With query logging on, one orders request for 100 orders runs 1 + 100 + 100 SQL queries: each Order.customer and Order.items resolver does its own Prisma lookup. That's the classic N+1 problem, 201 round trips to postgres for one page.",
      "DataLoader: I added loaders for customers and items that batch the ids of one request into a single findMany with an IN list.",
      "The same request runs 3 SQL statements now and answers in 180 ms. A test fails if the orders resolver issues more than 5.",
    ],
  },
];

const WORKS_D: Work[] = [
  {
    id: "android-battery",
    subject: {
      names: ["the Android app", "the Kotlin app", "the driver app"],
      project: "/home/dev/mobile",
      facts: [
        "The Android app is Kotlin with Jetpack Compose.",
        "Location updates feed the delivery tracking screen.",
        "Most users are on Android 12 to 14.",
      ],
    },
    problem: {
      names: ["battery drain", "battery"],
      opens: [
        "People say {S} drains their battery.",
        "{S} uses a lot of battery in the background.",
      ],
      facts: [
        "It keeps waking up even when nobody uses it.",
        "The profiler shows a sensor active all the time.",
      ],
      fixes: [
        "Background updates stop when nothing needs them.",
        "Updates are batched and scheduled by the OS now.",
      ],
    },
    keyword: "android battery drain",
    question: "why did the android app drain the battery?",
    paraphrase: "GPS staying on in the background after a delivery was finished",
    spread: false,
    user: [
      "Play Store reviews say the app drains the battery. Android vitals shows excessive wakeups.",
      "It should only track during a delivery.",
    ],
    assistant: [
      "The location service requests high-accuracy updates every second and keeps running after the delivery ends, because stopService is only called from the tracking screen's onDestroy, which doesn't run when the app is swiped away.",
      "Right. I tied the location updates to the delivery state: they start when a delivery starts and stop when it's delivered or cancelled, and the interval is 10 seconds with balanced power accuracy.",
      "On a Pixel 7 the battery drain in the background went from 9 percent per hour to under 1. The Android vitals wakeup alert should clear in a few days.",
    ],
  },
  {
    id: "spring-gc",
    subject: {
      names: ["the inventory service", "the Spring Boot service", "the Java service"],
      project: "/home/dev/inventory",
      facts: [
        "Inventory is a Spring Boot 3 service on Java 21 with a 4 GB heap.",
        "It caches product data in a Caffeine cache.",
        "The latency SLO is 200 ms at p99.",
      ],
    },
    problem: {
      names: ["latency spikes", "pauses"],
      opens: [
        "{S} has latency spikes every few minutes.",
        "We see long pauses in {S} every few minutes.",
      ],
      facts: [
        "The spikes come at regular intervals, not with traffic.",
        "Every instance shows them, not just one.",
      ],
      fixes: [
        "I capped the cache so the heap stops filling up.",
        "I fixed the allocation hot spot so memory fills more slowly.",
      ],
    },
    keyword: "spring gc pauses",
    question: "what caused the gc pauses in the inventory service?",
    paraphrase: "p99 jumping to seconds because a cache with no size limit filled the java heap",
    spread: false,
    user: [
      "Inventory's p99 jumps to 3 seconds every few minutes, the rest of the time it's 40 ms.",
      "Why would a cache cause that?",
    ],
    assistant: [
      "GC logs show G1 doing full collections of 2 to 3 seconds every few minutes. The heap fills up with product objects held by the Caffeine cache, which has no maximum size.",
      "The cache holds every product ever read, so the old generation fills up, G1 can't keep up with mixed collections and falls back to a full GC that stops the whole JVM. I set maximumSize to 50,000 entries with a 10 minute expiry.",
      "With the cache bounded, GC pauses stay under 50 ms and p99 is 60 ms. I also switched the Spring Boot service to ZGC on staging to compare.",
    ],
  },
  {
    id: "dns-cname",
    subject: {
      names: ["the marketing site", "the www domain", "the new website"],
      project: "/srv/ops",
      facts: [
        "DNS for the company domains is hosted in Route 53.",
        "The marketing site moved to a new host last week.",
        "Most records have a TTL of 300 seconds.",
      ],
    },
    problem: {
      names: ["wrong records", "not resolving"],
      opens: [
        "{S} doesn't resolve for some people.",
        "After the move {S} still points to the old server.",
      ],
      facts: [
        "Some resolvers still have the old answer cached.",
        "dig shows two different answers depending on the resolver.",
      ],
      fixes: [
        "I fixed the record and lowered the TTL before the next change.",
        "I removed the conflicting record.",
      ],
    },
    keyword: "dns cname",
    question: "why did the marketing site still show the old version after the move?",
    paraphrase: "some people still saw the previous website because of a leftover A record",
    spread: true,
    user: [
      "Half the team still sees the old marketing site on www. I changed the DNS last week.",
      "How long until it's right everywhere?",
    ],
    assistant: [
      "In Route 53 there's still an A record for www next to the new CNAME, left from the old setup. Resolvers get both and some pick the old address, and that A record has a TTL of 86400.",
      "I deleted the old A record, so the CNAME to the new host is the only answer. Caches that still hold the old address expire within a day because of that 24 hour TTL.",
      "dig against 8.8.8.8 and 1.1.1.1 returns the CNAME now. I lowered the TTL on the marketing records to 300 for future moves.",
    ],
  },
  {
    id: "sqlite-locked",
    subject: {
      names: ["the desktop app", "the local database", "the Electron app"],
      project: "/home/dev/desktop",
      facts: [
        "The desktop app keeps its data in a SQLite file under the user's profile.",
        "A background sync thread writes while the UI reads.",
        "We use better-sqlite3 from the Electron main process.",
      ],
    },
    problem: {
      names: ["database locked", "busy errors"],
      opens: [
        "{S} throws database is locked errors.",
        "Writes in {S} fail randomly with a busy error.",
      ],
      facts: [
        "Errors happen when two writers run at the same time.",
        "A long transaction blocks the other writer.",
      ],
      fixes: [
        "All writes go through one connection now.",
        "I shortened the transactions and added a wait.",
      ],
    },
    keyword: "sqlite database locked",
    question: "how did we fix the database is locked errors in the desktop app?",
    paraphrase: "the sync thread and the editor fighting over the same local file",
    spread: false,
    user: [
      "Users report 'SQLITE_BUSY: database is locked' when the sync runs while they edit.",
      "Should we move to WAL?",
    ],
    assistant: [
      "The sync thread opens its own connection and holds a write transaction for the whole sync, sometimes 20 seconds, while the UI tries to save the user's edits and gives up at once because busy_timeout is 0.",
      "Yes: WAL lets readers and the writer work at the same time. I enabled journal_mode=WAL, set busy_timeout to 5000, and the sync commits every 200 rows instead of holding one long transaction.",
      "No more locked errors in a stress test with sync and edits running together for an hour. The SQLite file stays in the user's profile as before.",
    ],
  },
  {
    id: "cors-preflight",
    subject: {
      names: ["the public API", "the API gateway", "api.example.com"],
      project: "/home/dev/api-gateway",
      facts: [
        "The public API is served from api.example.com while the app is on app.example.com.",
        "The gateway is an Express app with a handful of middlewares.",
        "Requests carry a bearer token in the Authorization header.",
      ],
    },
    problem: {
      names: ["CORS error", "CORS"],
      opens: [
        "The browser blocks calls to {S} with a CORS error.",
        "{S} works with curl but not from the browser.",
      ],
      facts: [
        "The response is missing Access-Control-Allow-Origin.",
        "The error mentions a header that isn't allowed.",
      ],
      fixes: [
        "I return the allowed origin and headers on every response.",
        "The CORS middleware runs before authentication now.",
      ],
    },
    keyword: "cors preflight",
    question: "why did the browser block calls to the public api?",
    paraphrase: "the web app on another subdomain refused because OPTIONS came back 404",
    spread: false,
    user: [
      "From app.example.com every call to api.example.com fails in the browser: blocked by CORS policy. curl works fine.",
      "Why only the calls with a token?",
    ],
    assistant: [
      "The preflight OPTIONS request gets a 404: the Express router only has GET and POST routes, and the cors middleware is mounted after the auth middleware, which rejects OPTIONS without a token.",
      "Requests with an Authorization header aren't simple requests, so the browser sends a preflight first; calls without a token skip it. I mounted cors() before auth with origin app.example.com and allowedHeaders Authorization and Content-Type.",
      "The preflight returns 204 with the right headers now and the app works from the browser. A test sends an OPTIONS request with Origin set.",
    ],
  },
  {
    id: "stripe-signature",
    subject: {
      names: ["the Stripe webhooks", "the payments webhook", "the webhook endpoint"],
      project: "/home/dev/shop",
      facts: [
        "Stripe sends payment events to /webhooks/stripe on the shop backend.",
        "The backend is a Next.js app deployed on Vercel.",
        "Events update the order status and send the receipt email.",
      ],
    },
    problem: {
      names: ["signature verification", "invalid signature"],
      opens: [
        "{S} rejects every request with an invalid signature.",
        "Signature verification fails for {S} after the upgrade.",
      ],
      facts: [
        "The computed signature never matches the header.",
        "It works in the test environment.",
      ],
      fixes: [
        "I verify against the raw body instead of the parsed one.",
        "I updated the secret to the one for this environment.",
      ],
    },
    keyword: "stripe webhook signature",
    question: "why did stripe webhook signature verification fail?",
    paraphrase: "payment events rejected after we added a JSON body parser for every route",
    spread: false,
    user: [
      "Since yesterday every Stripe webhook fails with No signatures found matching the expected signature for payload. Orders stay pending.",
      "Why did it work before?",
    ],
    assistant: [
      "constructEvent needs the raw request body, byte for byte. The new middleware parses JSON for all routes, including /webhooks/stripe, so we verify a re-serialized body and the signature never matches.",
      "Before yesterday the JSON parser was only on /api routes; the refactor moved it to the app level. I excluded the webhook route and read it with express.raw({ type: 'application/json' }).",
      "Webhooks verify again, and I replayed the failed events from the Stripe dashboard, so the pending orders are paid now.",
    ],
  },
  {
    id: "jest-timers",
    subject: {
      names: ["the unit tests", "the test suite", "the jest suite"],
      project: "/home/dev/shop",
      facts: [
        "Unit tests run with jest and ts-jest, about 2,400 of them.",
        "CI splits the suite into four shards.",
        "Some tests cover the debounce and throttle helpers.",
      ],
    },
    problem: {
      names: ["flaky tests", "flaky"],
      opens: [
        "{S} is flaky, it fails about one run in ten.",
        "Some tests in {S} fail randomly on CI.",
      ],
      facts: ["The failures don't reproduce locally.", "They depend on the order tests run in."],
      fixes: [
        "I removed the shared state between tests.",
        "I replaced the sleeps with waiting for the actual condition.",
      ],
    },
    keyword: "flaky jest fake timers",
    question: "how did we fix the flaky jest tests?",
    paraphrase: "the debounce tests that failed one run in ten because timers leaked between files",
    spread: true,
    user: [
      "The debounce tests fail maybe one run in ten on CI, never on my laptop. Jest says the callback was called 0 times.",
      "Can we find other tests with the same problem?",
    ],
    assistant: [
      "The debounce suite calls jest.useFakeTimers() in some tests but never restores real timers, and CI shards run test files in a different order. When a file that expects real timers runs after one that left fake timers on, its setTimeout never fires.",
      "I added jest.useRealTimers() in a global afterEach and set fakeTimers in the config per file where it's needed. A search found 6 other files that switched timers without restoring them.",
      "200 CI runs in a row without a failure. The flaky ones were all leaking fake timers.",
    ],
  },
  {
    id: "helm-upgrade",
    subject: {
      names: ["the helm chart", "the API release", "the chart for the API"],
      project: "/home/dev/infra/charts",
      facts: [
        "The API is deployed with a helm chart from the charts repo.",
        "Values per environment live in values-staging.yaml and values-prod.yaml.",
        "Argo CD syncs the release from git.",
      ],
    },
    problem: {
      names: ["failed upgrade", "rollback"],
      opens: ["Upgrading {S} fails halfway.", "The upgrade of {S} keeps failing and rolls back."],
      facts: [
        "It fails only in production, staging upgraded fine.",
        "The previous version is still running.",
      ],
      fixes: [
        "I recreated the resource that can't be changed in place.",
        "I pinned the version and upgraded step by step.",
      ],
    },
    keyword: "helm upgrade immutable",
    question: "why did the helm upgrade of the api fail in production?",
    paraphrase: "the release rolled back because a selector label on the deployment can't change",
    spread: false,
    user: [
      "helm upgrade of the API fails in production: the Deployment is invalid, field is immutable. Staging went fine.",
      "Can we do it without downtime?",
    ],
    assistant: [
      "The new chart version adds app.kubernetes.io/version to the selector labels. A Deployment's spec.selector can't change after creation, so the upgrade fails and Argo rolls back. Staging worked because it was recreated last month.",
      "Yes: I removed the version label from the selector, so it's only on the pod template. The existing Deployment keeps its selector and rolls pods normally.",
      "The helm upgrade went through in production with a normal rolling update and zero downtime.",
    ],
  },
];

/** The 32 pieces of work, in a fixed order (question ids and paraphrase subsets use it). */
export const WORKS: readonly Work[] = [...WORKS_A, ...WORKS_B, ...WORKS_C, ...WORKS_D];
