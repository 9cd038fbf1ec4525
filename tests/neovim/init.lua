-- Neovim's own LSP client (0.7 and later) on permaudit's server: tests/neovim.rs opens a
-- config with this init, waits for the diagnostics, writes them to NVIM_LSP_OUT
-- (`line:col code source` a line) and quits.
local out = os.getenv("NVIM_LSP_OUT")
local bin = os.getenv("PERMAUDIT_BIN")
local root = os.getenv("PROJECT")
vim.api.nvim_create_autocmd("FileType", {
  pattern = { "json", "jsonc", "markdown" },
  callback = function(args)
    local id = vim.lsp.start_client({
      name = "permaudit",
      cmd = { bin, "server" },
      root_dir = root,
    })
    vim.lsp.buf_attach_client(args.buf, id)
  end,
})
local function dump()
  local f = io.open(out, "w")
  for _, d in ipairs(vim.diagnostic.get(0)) do
    f:write(string.format("%d:%d %s %s\n", d.lnum + 1, d.col + 1, d.code or "?", d.source or "?"))
  end
  f:close()
end
-- Wait until diagnostics arrive (or 20 s), write them, quit.
vim.api.nvim_create_autocmd("VimEnter", {
  callback = function()
    vim.wait(20000, function() return #vim.diagnostic.get(0) > 0 end, 100)
    dump()
    vim.cmd("qa!")
  end,
})
