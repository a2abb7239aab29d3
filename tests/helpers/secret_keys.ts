/**
 * Real-SHAPED secrets for the masking tests (issue 18), generated from random bytes in
 * each provider's charset and length — never a real key. One generator per kind of the
 * rule set (lib/secrets/rules.ts); `plantedKeys()` makes one of each, with the kind the
 * masker must report and a line of context that carries it the way a conversation would.
 * Bodies always mix the character classes a real key of that format shows (a digit, an
 * upper- and a lowercase letter), so a generated key can never be a degenerate lookalike.
 */

const LOWER = "abcdefghijklmnopqrstuvwxyz";
const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DIGIT = "0123456789";
const ALNUM = LOWER + UPPER + DIGIT;
const URLSAFE = ALNUM + "_-";
const B64 = ALNUM + "+/";

/**
 * The structural tells the masker reads as a placeholder (lib/secrets/_checks.ts: a run of
 * six of one character, case-folded, and "..."): a random draw hits one about once in a
 * few thousand keys, and a real key of these formats does not look like that, so such a
 * draw is drawn again rather than made a flaky test.
 */
const PLACEHOLDER_TELL = /(.)\1{5}|\.\.\./i;

/** `n` random characters of `charset`, with one of each of `must` at random places. */
export function randomChars(charset: string, n: number, must: string[] = []): string {
  for (;;) {
    const bytes = crypto.getRandomValues(new Uint32Array(n + must.length));
    const out = Array.from({ length: n }, (_, i) => charset[bytes[i]! % charset.length]!);
    must.forEach((set, k) => {
      const at = bytes[n + k]! % n;
      out[at] = set[bytes[(n + k + 1) % bytes.length]! % set.length]!;
    });
    const s = out.join("");
    if (!PLACEHOLDER_TELL.test(s)) return s;
  }
}

const mixed = [LOWER, UPPER, DIGIT];

function b64url(s: string): string {
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** One planted secret: the secret, its kind, and a line carrying it. */
export interface PlantedKey {
  kind: string;
  secret: string;
  line: string;
}

/** One generated key of every kind the masker knows. */
export function plantedKeys(): PlantedKey[] {
  const k = (kind: string, secret: string, line: (s: string) => string): PlantedKey => ({
    kind,
    secret,
    line: line(secret),
  });
  const pemBody = Array.from({ length: 6 }, () => randomChars(B64, 64, mixed)).join("\n");
  const jwt = `${b64url(JSON.stringify({ alg: "HS256", typ: "JWT" }))}.${
    b64url(JSON.stringify({ sub: randomChars(DIGIT, 10), iat: 1_700_000_000 }))
  }.${randomChars(URLSAFE, 43, mixed)}`;
  return [
    k(
      "openai key",
      `sk-proj-${randomChars(URLSAFE, 56, mixed)}T3BlbkFJ${randomChars(URLSAFE, 56, mixed)}`,
      (s) => `export OPENAI_API_KEY=${s}`,
    ),
    k(
      "openai key",
      `sk-${randomChars(ALNUM, 48, mixed)}`,
      (s) => `my old key is ${s}, still works`,
    ),
    k(
      "anthropic key",
      `sk-ant-api03-${randomChars(URLSAFE, 93, mixed)}AA`,
      (s) => `ANTHROPIC_API_KEY="${s}"`,
    ),
    k(
      "github token",
      `ghp_${randomChars(ALNUM, 36, mixed)}`,
      (s) => `git remote set-url origin https://${s}@github.com/o/r`,
    ),
    k("github token", `github_pat_${randomChars(ALNUM + "_", 82, mixed)}`, (s) => `token: ${s}`),
    k("gitlab token", `glpat-${randomChars(URLSAFE, 20, mixed)}`, (s) => `use ${s} for the CI`),
    k(
      "aws access key",
      `AKIA${randomChars(UPPER + "234567", 16, [UPPER, "234567"])}`,
      (s) => `aws_access_key_id = ${s}`,
    ),
    k("aws secret key", randomChars(B64, 40, mixed), (s) => `aws_secret_access_key = ${s}`),
    k(
      "slack token",
      `xoxb-${randomChars(DIGIT, 12)}-${randomChars(DIGIT, 13)}-${randomChars(ALNUM, 24, mixed)}`,
      (s) => `SLACK_BOT_TOKEN=${s}`,
    ),
    k(
      "slack webhook",
      `https://hooks.slack.com/services/T${randomChars(UPPER + DIGIT, 10)}/B${
        randomChars(UPPER + DIGIT, 10)
      }/${randomChars(ALNUM, 24, mixed)}`,
      (s) => `curl -X POST ${s} -d '{}'`,
    ),
    k("stripe key", `sk_live_${randomChars(ALNUM, 99, mixed)}`, (s) => `stripe.api_key = "${s}"`),
    k("gcp api key", `AIza${randomChars(URLSAFE, 35, mixed)}`, (s) => `?key=${s}&q=x`),
    k(
      "gcp oauth secret",
      `GOCSPX-${randomChars(URLSAFE, 28, mixed)}`,
      (s) => `"client_secret": "${s}"`,
    ),
    k(
      "npm token",
      `npm_${randomChars(ALNUM, 36, mixed)}`,
      (s) => `//registry.npmjs.org/:_authToken=${s}`,
    ),
    k(
      "huggingface token",
      `hf_${randomChars(LOWER + UPPER, 34, [LOWER, UPPER])}`,
      (s) => `HF_TOKEN=${s}`,
    ),
    k(
      "sendgrid key",
      `SG.${randomChars(URLSAFE, 22, mixed)}.${randomChars(URLSAFE, 43, mixed)}`,
      (s) => `SENDGRID_API_KEY=${s}`,
    ),
    k(
      "private key",
      `-----BEGIN RSA PRIVATE KEY-----\n${pemBody}\n-----END RSA PRIVATE KEY-----`,
      (s) => `here is the key:\n${s}\nthanks`,
    ),
    k("jwt", jwt, (s) => `cookie session=${s}; Path=/`),
    k(
      "bearer token",
      randomChars(ALNUM + "._-", 40, mixed),
      (s) => `curl -H "Authorization: Bearer ${s}" https://api.example.org`,
    ),
    k(
      "basic auth",
      btoa(`deploy:${randomChars(ALNUM, 16, mixed)}`),
      (s) => `Authorization: Basic ${s}`,
    ),
    k(
      "url password",
      randomChars(ALNUM, 14, mixed),
      (s) => `DATABASE_URL=postgres://app:${s}@db.internal:5432/app`,
    ),
    k("password", `${randomChars(ALNUM, 10, mixed)}!`, (s) => `password=${s}`),
    k("generic secret", randomChars(ALNUM, 32, mixed), (s) => `"client_secret": "${s}"`),
  ];
}
