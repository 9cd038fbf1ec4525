// permaudit for VS Code: starts `permaudit server` (the language server of docs/editors.md)
// for the files OpenCode reads, and says what to do when the binary is missing or too old.
import { execFile } from "child_process";
import * as os from "os";
import * as path from "path";
import * as vscode from "vscode";
import {
  DocumentSelector,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
} from "vscode-languageclient/node";

// The oldest permaudit whose server this extension was written against (hover, code actions,
// file watching); an older binary is refused with the install command.
export const MIN_VERSION = "0.1.0";
export const INSTALL_COMMAND = "cargo install --locked --git https://github.com/permaudit/permaudit";

let client: LanguageClient | undefined;
let output: vscode.OutputChannel;
// One start at a time: a settings change while starting waits for it.
let pending: Promise<void> = Promise.resolve();

export function activate(context: vscode.ExtensionContext): void {
  output = vscode.window.createOutputChannel("permaudit");
  context.subscriptions.push(output);
  context.subscriptions.push(
    vscode.commands.registerCommand("permaudit.restart", () => restart()),
    vscode.commands.registerCommand("permaudit.showOutput", () => output.show(true)),
    vscode.commands.registerCommand("permaudit.explain", (...args: unknown[]) => explain(args)),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("permaudit")) {
        output.appendLine("permaudit: settings changed, restarting the server");
        restart();
      }
    }),
  );
  restart();
}

export function deactivate(): Thenable<void> | undefined {
  return stop();
}

function restart(): Promise<void> {
  pending = pending.then(async () => {
    await stop();
    await start();
  }).catch((e) => {
    output.appendLine(`permaudit: ${e instanceof Error ? e.message : String(e)}`);
  });
  return pending;
}

async function stop(): Promise<void> {
  const running = client;
  client = undefined;
  if (running) {
    try {
      await running.stop();
    } catch (e) {
      output.appendLine(`permaudit: stopping the server: ${String(e)}`);
    }
  }
}

/** The directory OpenCode's global config lives in (XDG_CONFIG_HOME or ~/.config). */
function globalConfigDir(): string {
  const xdg = process.env.XDG_CONFIG_HOME;
  return path.join(xdg && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), ".config"), "opencode");
}

/** The files the server serves: those OpenCode reads (docs/editors.md). */
export function documentSelector(): DocumentSelector {
  const global = globalConfigDir().split(path.sep).join("/");
  return [
    { scheme: "file", pattern: "**/opencode.{json,jsonc}" },
    { scheme: "file", pattern: "**/.opencode/**/*.{json,jsonc,md}" },
    { scheme: "file", pattern: `${global}/**/*.{json,jsonc,md}` },
    // Markdown agents and modes in a config directory named `opencode` (OPENCODE_CONFIG_DIR).
    { scheme: "file", pattern: "**/opencode/{agent,agents,mode,modes}/**/*.md" },
    // Unsaved buffers of those names.
    { scheme: "untitled", pattern: "**/opencode.{json,jsonc}" },
  ];
}

function executable(): string {
  const configured = vscode.workspace.getConfiguration("permaudit").get<string>("path", "").trim();
  if (!configured) {
    return "permaudit";
  }
  if (configured.startsWith("~/")) {
    return path.join(os.homedir(), configured.slice(2));
  }
  return configured;
}

/** `permaudit --version`'s version, or why there is none. */
function version(command: string): Promise<{ version?: string; error?: string }> {
  return new Promise((resolve) => {
    execFile(command, ["--version"], { timeout: 15000 }, (error, stdout) => {
      if (error) {
        const code = (error as NodeJS.ErrnoException).code;
        resolve({ error: code === "ENOENT" ? "not found" : error.message });
        return;
      }
      const m = /permaudit\s+(\d+)\.(\d+)\.(\d+)/.exec(stdout);
      resolve(m ? { version: `${m[1]}.${m[2]}.${m[3]}` } : { error: `unexpected --version output: ${stdout.trim()}` });
    });
  });
}

/** a < b for dotted versions of three numbers. */
export function older(a: string, b: string): boolean {
  const x = a.split(".").map(Number);
  const y = b.split(".").map(Number);
  for (let i = 0; i < 3; i++) {
    if ((x[i] ?? 0) !== (y[i] ?? 0)) {
      return (x[i] ?? 0) < (y[i] ?? 0);
    }
  }
  return false;
}

async function complain(message: string): Promise<void> {
  output.appendLine(`permaudit: ${message}`);
  const copy = "Copy install command";
  const log = "Show log";
  const choice = await vscode.window.showErrorMessage(message, copy, log);
  if (choice === copy) {
    await vscode.env.clipboard.writeText(INSTALL_COMMAND);
  } else if (choice === log) {
    output.show(true);
  }
}

async function start(): Promise<void> {
  const command = executable();
  const found = await version(command);
  const where = command === "permaudit" ? "on PATH" : `at ${command} (the permaudit.path setting)`;
  if (found.error !== undefined) {
    void complain(
      `permaudit ${found.error === "not found" ? "was not found" : `did not run (${found.error})`} ${where}. ` +
        `Install it with \`${INSTALL_COMMAND}\`, or set permaudit.path to the binary.`,
    );
    return;
  }
  if (found.version !== undefined && older(found.version, MIN_VERSION)) {
    void complain(
      `permaudit ${found.version} ${where} is older than this extension expects (${MIN_VERSION} or later). ` +
        `Update it with \`${INSTALL_COMMAND}\`.`,
    );
    return;
  }
  output.appendLine(`permaudit: starting ${command} server (permaudit ${found.version})`);
  // stdio without `transport`: TransportKind.stdio appends `--stdio`, which builds of
  // `permaudit server` before it accepted the flag refuse; without it every build works.
  const serverOptions: ServerOptions = { command, args: ["server"] };
  const clientOptions: LanguageClientOptions = {
    documentSelector: documentSelector(),
    outputChannel: output,
    traceOutputChannel: output,
    diagnosticCollectionName: "permaudit",
  };
  const started = new LanguageClient("permaudit", "permaudit", serverOptions, clientOptions);
  client = started;
  await started.start();
}

/**
 * A CodeLens' command (`permaudit.explain`, arguments `[agent, permission, pattern,
 * input]`): `permaudit explain --agent AGENT PERMISSION INPUT` run in the project of the
 * active file, its answer in the output channel and in a message.
 */
async function explain(args: unknown[]): Promise<void> {
  const [agent, permission, pattern, input] = args.map((a) => (typeof a === "string" ? a : ""));
  if (!agent || !permission) {
    void vscode.window.showWarningMessage("permaudit: explain needs an agent and a permission (run it from a CodeLens).");
    return;
  }
  const active = vscode.window.activeTextEditor?.document.uri;
  const folder = (active && vscode.workspace.getWorkspaceFolder(active)) ?? vscode.workspace.workspaceFolders?.[0];
  const cwd = folder?.uri.fsPath ?? (active ? path.dirname(active.fsPath) : undefined);
  const argv = ["explain", "--color", "never", "--agent", agent, permission, input || pattern];
  const text = await new Promise<string>((resolve) => {
    execFile(executable(), argv, { timeout: 30000, cwd }, (error, stdout, stderr) => {
      const out = `${stdout}${stderr}`.trim();
      resolve(out || (error ? error.message : ""));
    });
  });
  output.appendLine(`permaudit explain --agent ${agent} ${permission} ${JSON.stringify(input || pattern)} (the rule "${pattern}"):`);
  output.appendLine(text);
  const shown = text.split("\n").filter((l) => l.trim()).slice(0, 3).join(" ");
  const more = "Show output";
  const choice = await vscode.window.showInformationMessage(`permaudit: ${shown}`, more);
  if (choice === more) {
    output.show(true);
  }
}
