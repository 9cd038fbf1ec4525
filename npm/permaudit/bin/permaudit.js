#!/usr/bin/env node
// The permaudit launcher: finds the binary of this platform's package (an optional
// dependency, `permaudit-<platform>-<arch>`, installed by npm only where its `os`, `cpu`
// and `libc` match) and runs it with the same arguments, standard streams and exit code.
"use strict";

const { spawnSync } = require("child_process");
const path = require("path");

function binary() {
  if (process.env.PERMAUDIT_BINARY) {
    return process.env.PERMAUDIT_BINARY;
  }
  const pkg = `permaudit-${process.platform}-${process.arch}`;
  const exe = process.platform === "win32" ? "permaudit.exe" : "permaudit";
  try {
    return require.resolve(`${pkg}/bin/${exe}`);
  } catch (e) {
    const here = path.dirname(__dirname);
    process.stderr.write(
      `permaudit: no binary for ${process.platform}-${process.arch}: the package ${pkg} is not installed next to ${here}.\n` +
        `It is an optional dependency of permaudit: reinstall without --omit=optional (or --no-optional).\n` +
        `If no such package exists for this platform, build permaudit from source (cargo install --locked --path .)\n` +
        `and set PERMAUDIT_BINARY to the binary.\n`
    );
    process.exit(2);
  }
}

const bin = binary();
const run = spawnSync(bin, process.argv.slice(2), { stdio: "inherit" });
if (run.error) {
  process.stderr.write(`permaudit: cannot run ${bin}: ${run.error.message}\n`);
  process.exit(2);
}
if (run.signal) {
  process.kill(process.pid, run.signal);
}
process.exit(run.status === null ? 2 : run.status);
