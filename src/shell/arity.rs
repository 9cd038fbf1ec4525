//! The "Always" pattern of a bash command: OpenCode 1.18.34's `BashArity.prefix`.
//!
//! When the user answers "Always" to a bash ask, OpenCode stores, for every asked part,
//! `prefix(tokens).join(" ") + " *"` as an `allow` rule in its in-memory `approved` list
//! (spec §2.3, §7). `prefix` tries the longest leading run of tokens that is a key of the
//! ARITY table and keeps that key's arity many tokens; with no key it keeps one token.
//!
//! The table below was extracted from the bundled JavaScript of the 1.18.34 binary (the
//! object literal right after `function Zi(o){for(let e=o.length;e>0;e--)…`), not from a
//! source tree: newer sources add wrappers (`sudo`, `timeout`, `xargs`, …) that 1.18.34
//! does not have. See `docs/research/D-bash.md`.
//!
//! A quirk kept on purpose: the lookup is `table[key]` on a plain JavaScript object, so a
//! key that names a property of `Object.prototype` (`constructor`, `toString`, …) is
//! "found" with a non-numeric arity, and `slice(0, NaN)` keeps **no** token: the stored
//! pattern is then `" *"`.

/// `(command prefix, arity)` exactly as in the 1.18.34 bundle, in its order.
pub const ARITY: &[(&str, usize)] = &[
    ("cat", 1),
    ("cd", 1),
    ("chmod", 1),
    ("chown", 1),
    ("cp", 1),
    ("echo", 1),
    ("env", 1),
    ("export", 1),
    ("grep", 1),
    ("kill", 1),
    ("killall", 1),
    ("ln", 1),
    ("ls", 1),
    ("mkdir", 1),
    ("mv", 1),
    ("ps", 1),
    ("pwd", 1),
    ("rm", 1),
    ("rmdir", 1),
    ("sleep", 1),
    ("source", 1),
    ("tail", 1),
    ("touch", 1),
    ("unset", 1),
    ("which", 1),
    ("aws", 3),
    ("az", 3),
    ("bazel", 2),
    ("brew", 2),
    ("bun", 2),
    ("bun run", 3),
    ("bun x", 3),
    ("cargo", 2),
    ("cargo add", 3),
    ("cargo run", 3),
    ("cdk", 2),
    ("cf", 2),
    ("cmake", 2),
    ("composer", 2),
    ("consul", 2),
    ("consul kv", 3),
    ("crictl", 2),
    ("deno", 2),
    ("deno task", 3),
    ("doctl", 3),
    ("docker", 2),
    ("docker builder", 3),
    ("docker compose", 3),
    ("docker container", 3),
    ("docker image", 3),
    ("docker network", 3),
    ("docker volume", 3),
    ("eksctl", 2),
    ("eksctl create", 3),
    ("firebase", 2),
    ("flyctl", 2),
    ("gcloud", 3),
    ("gh", 3),
    ("git", 2),
    ("git config", 3),
    ("git remote", 3),
    ("git stash", 3),
    ("go", 2),
    ("gradle", 2),
    ("helm", 2),
    ("heroku", 2),
    ("hugo", 2),
    ("ip", 2),
    ("ip addr", 3),
    ("ip link", 3),
    ("ip netns", 3),
    ("ip route", 3),
    ("kind", 2),
    ("kind create", 3),
    ("kubectl", 2),
    ("kubectl kustomize", 3),
    ("kubectl rollout", 3),
    ("kustomize", 2),
    ("make", 2),
    ("mc", 2),
    ("mc admin", 3),
    ("minikube", 2),
    ("mongosh", 2),
    ("mysql", 2),
    ("mvn", 2),
    ("ng", 2),
    ("npm", 2),
    ("npm exec", 3),
    ("npm init", 3),
    ("npm run", 3),
    ("npm view", 3),
    ("nvm", 2),
    ("nx", 2),
    ("openssl", 2),
    ("openssl req", 3),
    ("openssl x509", 3),
    ("pip", 2),
    ("pipenv", 2),
    ("pnpm", 2),
    ("pnpm dlx", 3),
    ("pnpm exec", 3),
    ("pnpm run", 3),
    ("poetry", 2),
    ("podman", 2),
    ("podman container", 3),
    ("podman image", 3),
    ("psql", 2),
    ("pulumi", 2),
    ("pulumi stack", 3),
    ("pyenv", 2),
    ("python", 2),
    ("rake", 2),
    ("rbenv", 2),
    ("redis-cli", 2),
    ("rustup", 2),
    ("serverless", 2),
    ("sfdx", 3),
    ("skaffold", 2),
    ("sls", 2),
    ("sst", 2),
    ("swift", 2),
    ("systemctl", 2),
    ("terraform", 2),
    ("terraform workspace", 3),
    ("tmux", 2),
    ("turbo", 2),
    ("ufw", 2),
    ("vault", 2),
    ("vault auth", 3),
    ("vault kv", 3),
    ("vercel", 2),
    ("volta", 2),
    ("wp", 2),
    ("yarn", 2),
    ("yarn dlx", 3),
    ("yarn run", 3),
];

/// Property names every plain JavaScript object inherits (JavaScriptCore, as Bun runs it):
/// `table[name]` is not `undefined` for these.
const PROTOTYPE_KEYS: &[&str] = &[
    "constructor",
    "__defineGetter__",
    "__defineSetter__",
    "hasOwnProperty",
    "__lookupGetter__",
    "__lookupSetter__",
    "isPrototypeOf",
    "propertyIsEnumerable",
    "toString",
    "valueOf",
    "__proto__",
    "toLocaleString",
];

/// The arity of a table key (`None`: not a key). `Some(0)` for the prototype names.
fn lookup(key: &str) -> Option<usize> {
    ARITY
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, n)| *n)
        .or_else(|| PROTOTYPE_KEYS.contains(&key).then_some(0))
}

/// `BashArity.prefix(tokens)`: how many leading tokens the "Always" pattern keeps.
pub fn prefix_len(tokens: &[&str]) -> usize {
    for e in (1..=tokens.len()).rev() {
        if let Some(n) = lookup(&tokens[..e].join(" ")) {
            return n.min(tokens.len());
        }
    }
    tokens.len().min(1)
}

/// The pattern "Always" stores for a command with these tokens: `prefix.join(" ") + " *"`.
pub fn always_pattern(tokens: &[&str]) -> String {
    let n = prefix_len(tokens);
    format!("{} *", tokens[..n].join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_has_the_1_18_34_size() {
        assert_eq!(ARITY.len(), 136);
        let mut keys: Vec<&str> = ARITY.iter().map(|(k, _)| *k).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), 136, "duplicate keys");
    }

    #[test]
    fn prefixes() {
        let p = |s: &str| always_pattern(&s.split(' ').collect::<Vec<_>>());
        assert_eq!(p("rm -rf /"), "rm *");
        assert_eq!(p("git push --force"), "git push *");
        assert_eq!(p("git -C x status"), "git -C *");
        assert_eq!(p("git config --global user.name"), "git config --global *");
        assert_eq!(p("npm run build"), "npm run build *");
        assert_eq!(p("git"), "git *");
        assert_eq!(p("unknowncmd a b"), "unknowncmd *");
        assert_eq!(p("sudo rm -rf /"), "sudo *");
        assert_eq!(p("toString x"), " *");
        assert_eq!(always_pattern(&[]), " *");
    }
}
