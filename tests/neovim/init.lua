-- tests/neovim.rs: the set-up docs/editors.md gives (tests/neovim/permaudit.lua, run as
-- written, `permaudit` found on PATH), every file of the argument list opened, the
-- diagnostics awaited, then written to NVIM_LSP_OUT (`clients N`, the completion labels
-- inside the first file's first deny, the first file's CodeLenses as `codelens LINE
-- TITLE`, then `file line:col code` a line) and Neovim quits.
dofile(os.getenv("PERMAUDIT_LUA"))
local out = os.getenv("NVIM_LSP_OUT")
local want = tonumber(os.getenv("WANT"))
vim.api.nvim_create_autocmd("VimEnter", {
  -- nested: the `:edit`s below run the snippet's BufReadPost/BufNewFile autocommands.
  nested = true,
  callback = function()
    for i = 0, vim.fn.argc() - 1 do
      vim.cmd("edit " .. vim.fn.fnameescape(vim.fn.argv(i)))
    end
    vim.wait(30000, function() return #vim.diagnostic.get() >= want end, 50)
    vim.wait(500, function() return false end, 50)
    local f = io.open(out, "w")
    local n = 0
    for _ in pairs(vim.lsp.get_active_clients()) do n = n + 1 end
    f:write(string.format("clients %d\n", n))
    -- Completion through Neovim's client, inside the first file's `"deny"` (line 4, column
    -- 20): the labels, comma-separated.
    local buf = vim.fn.bufnr(vim.fn.argv(0))
    local labels = {}
    local params = { textDocument = { uri = vim.uri_from_bufnr(buf) }, position = { line = 3, character = 19 } }
    for _, r in pairs(vim.lsp.buf_request_sync(buf, "textDocument/completion", params, 10000) or {}) do
      local items = r.result and (r.result.items or r.result) or {}
      for _, item in ipairs(items) do table.insert(labels, item.label) end
    end
    f:write("completion " .. table.concat(labels, ",") .. "\n")
    -- CodeLenses through Neovim's client (vim.lsp.codelens.refresh, then get): the first
    -- file's, `codelens LINE TITLE` each, in line order.
    vim.api.nvim_set_current_buf(buf)
    vim.lsp.codelens.refresh()
    vim.wait(10000, function() return #vim.lsp.codelens.get(buf) > 0 end, 50)
    local lenses = vim.lsp.codelens.get(buf)
    table.sort(lenses, function(a, b) return a.range.start.line < b.range.start.line end)
    for _, l in ipairs(lenses) do
      f:write(string.format("codelens %d %s\n", l.range.start.line + 1, l.command and l.command.title or "?"))
    end
    for _, d in ipairs(vim.diagnostic.get()) do
      local name = vim.api.nvim_buf_get_name(d.bufnr)
      f:write(string.format("%s %d:%d %s\n", name, d.lnum + 1, d.col + 1, d.code or "?"))
    end
    f:close()
    vim.cmd("qa!")
  end,
})
