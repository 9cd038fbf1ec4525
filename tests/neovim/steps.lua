-- tests/neovim.rs: an editing session driven by a list of steps (STEPS, a JSON file), with
-- the set-up docs/editors.md gives (tests/neovim/permaudit.lua, run as written, `permaudit`
-- found on PATH). Steps: `open` a file, `set` a buffer's text (unsaved; a new file stays
-- unsaved), `write` every buffer and close all but the current one, `run` a command (an external `permaudit check --fix`) and
-- reload what it changed (`:checktime`, as Neovim does on focus), `expect` the diagnostics
-- of a file (`file line:col code` lines): wait until Neovim shows exactly those (or 10 s),
-- then write what it shows to NVIM_LSP_OUT under `== label`. Last, `clients N`.
dofile(os.getenv("PERMAUDIT_LUA"))
vim.o.autoread = true
vim.o.hidden = true
local out = io.open(os.getenv("NVIM_LSP_OUT"), "w")
local steps = vim.fn.json_decode(table.concat(vim.fn.readfile(os.getenv("STEPS")), "\n"))

local function shown()
  local lines = {}
  for _, d in ipairs(vim.diagnostic.get()) do
    local name = vim.api.nvim_buf_get_name(d.bufnr)
    table.insert(lines, string.format("%s %d:%d %s", name, d.lnum + 1, d.col + 1, d.code or "?"))
  end
  table.sort(lines)
  return table.concat(lines, "\n")
end

-- Show a file's buffer (`:edit` for one not loaded yet: a new file stays unsaved).
local function show(name)
  local b = vim.fn.bufnr(name)
  if b ~= -1 and vim.api.nvim_buf_is_loaded(b) then
    vim.api.nvim_set_current_buf(b)
  else
    vim.cmd("edit " .. vim.fn.fnameescape(name))
  end
end

local function run(step)
  if step.open then
    show(step.open)
  elseif step.set then
    show(step.set)
    local lines = vim.split(step.text, "\n", { plain = true })
    if lines[#lines] == "" then table.remove(lines) end
    vim.api.nvim_buf_set_lines(0, 0, -1, false, lines)
  elseif step.write then
    -- Saved, and every buffer but the current one closed.
    vim.cmd("silent! wall")
    local here = vim.api.nvim_get_current_buf()
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if b ~= here and vim.api.nvim_buf_is_loaded(b) then vim.api.nvim_buf_delete(b, {}) end
    end
  elseif step.run then
    vim.fn.system(step.run)
    -- The open buffer reloaded from disk, as `autoread` does (`:checktime` misses a change
    -- of the same size within the second).
    vim.cmd("silent! edit!")
  elseif step.expect then
    local want = table.concat(vim.fn.readfile(step.expect), "\n")
    vim.wait(10000, function() return shown() == want end, 50)
    out:write("== " .. step.label .. "\n")
    local now = shown()
    if now ~= "" then out:write(now .. "\n") end
    out:flush()
  end
end

vim.api.nvim_create_autocmd("VimEnter", {
  -- nested: the `:edit`s below run the snippet's BufReadPost/BufNewFile autocommands.
  nested = true,
  callback = function()
    for _, step in ipairs(steps) do run(step) end
    local n = 0
    for _ in pairs(vim.lsp.get_active_clients()) do n = n + 1 end
    out:write(string.format("clients %d\n", n))
    out:close()
    vim.cmd("qa!")
  end,
})
