import assert from "node:assert/strict";
import { parseWorkspaceYaml } from "./workspace_yaml.ts";

Deno.test("workspace.yaml: flat scalars only; name wins over summary; quotes undone", () => {
  assert.deepEqual(
    parseWorkspaceYaml(
      'id: s1\ncwd: /home/dev/app\nsummary: "Fix \\"flaky\\" test"\nsummary_count: 1\n',
    ),
    { title: 'Fix "flaky" test', cwd: "/home/dev/app" },
  );
  assert.deepEqual(parseWorkspaceYaml("name: 'It''s named'\nsummary: other\n"), {
    title: "It's named",
    cwd: null,
  });
  assert.deepEqual(parseWorkspaceYaml("nested:\n  cwd: /no\n- list\n"), { title: null, cwd: null });
});
