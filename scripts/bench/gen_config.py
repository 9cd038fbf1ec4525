#!/usr/bin/env python3
"""The generated config of scripts/bench-check.sh and scripts/bench-server.py: N rules spread
over ten permissions the way real configs are written (path prefixes, command prefixes, a
catch-all per permission, some deliberately dead or shadowed rules), seeded by N so every run
measures the same input.

    python3 scripts/bench/gen_config.py N > opencode.json
"""
import json, random, sys


def config(n):
    random.seed(n)
    perms = ["bash", "edit", "read", "glob", "grep", "task", "external_directory", "skill", "lsp", "github_create_issue"]
    heads = {"bash": ["git ", "npm ", "cargo ", "rm ", "docker ", "make "], "external_directory": ["/tmp/", "/srv/", "~/"]}
    cfg, left = {}, n
    for k, p in enumerate(perms):
        count = left if k == len(perms) - 1 else n // len(perms)
        left -= count
        block = {}
        if random.random() < 0.5:
            block["*"] = random.choice(["ask", "allow"])
        while len(block) < count:
            head = random.choice(heads.get(p, ["src/", "tests/", "lib/", "docs/", ".github/", "*."]))
            tail = random.choice(["*", "/*", "/**", "", " *", ".ts", "?"])
            block[f"{head}m{len(block)}{tail}"] = random.choice(["allow", "ask", "deny"])
        if "*" not in block and random.random() < 0.5:
            block["*"] = "ask"
        cfg[p] = block
    return {"permission": cfg}


if __name__ == "__main__":
    print(json.dumps(config(int(sys.argv[1])), indent=1))
