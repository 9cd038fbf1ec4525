-- permaudit server in Neovim 0.7 or later: one client per project, for every file OpenCode
-- reads (project and global opencode.json(c), config.json, agent(s)/ and mode(s)/ markdown,
-- .opencode/permaudit.jsonc), rooted from the file, not from Neovim's working directory.
local function permaudit_file(name)
  return name:match("/opencode%.jsonc?$") or name:match("/opencode/config%.json$")
    or name:match("/%.opencode/permaudit%.jsonc$")
    or name:match("/%.?opencode/agents?/.+%.md$") or name:match("/%.?opencode/modes?/[^/]+%.md$")
end
-- The directory OpenCode would start in: the git worktree holding the file, else the project
-- of a `.opencode/` file, else the file's directory.
local function permaudit_root(name)
  local dir = vim.fn.fnamemodify(name, ":p:h")
  local git = vim.fn.finddir(".git", dir .. ";")
  if git == "" then git = vim.fn.findfile(".git", dir .. ";") end
  if git ~= "" then
    return vim.fn.fnamemodify((vim.fn.fnamemodify(git, ":p"):gsub("/$", "")), ":h")
  end
  return name:match("^(.*)/%.opencode/") or dir
end
-- A global file (~/.config/opencode/…) is read by every project: it joins a running client.
local function permaudit_global(name)
  local config = (os.getenv("XDG_CONFIG_HOME") or (os.getenv("HOME") .. "/.config")) .. "/opencode/"
  return name:sub(1, #config) == config
end
local permaudit_clients = {}
vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile" }, {
  pattern = { "*.json", "*.jsonc", "*.md" },
  callback = function(args)
    local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(args.buf), ":p")
    if not permaudit_file(name) then return end
    local root = permaudit_root(name)
    local id = permaudit_clients[root]
    if permaudit_global(name) then
      for _, running in pairs(permaudit_clients) do
        if vim.lsp.get_client_by_id(running) then id = running end
      end
    end
    if not (id and vim.lsp.get_client_by_id(id)) then
      id = vim.lsp.start_client({ name = "permaudit", cmd = { "permaudit", "server" }, root_dir = root })
      permaudit_clients[root] = id
    end
    vim.lsp.buf_attach_client(args.buf, id)
  end,
})
